//! The kernel bodies for rgemm's CPU executor, instantiated here, once per element type.
//!
//! The host's dispatch is generic over the element type, so without this table every crate
//! that runs a product on the executor (the library's users, each test and tool binary)
//! would compile every kernel body again for every type: minutes of build per crate. Here
//! each body is compiled once, while the build script makes the PTX, behind one
//! non-generic function per type ([`HostBodies`]).
use crate::element::{Bf16, Element, F16, Narrow};
use crate::problem::Body;

/// Names the table's rows: the bodies of [`for_each_kernel!`](crate::for_each_kernel!).
macro_rules! body_table {
    (
        fixed { $( $(#[$fdoc:meta])* $fixed:ident => $fspec:path, $fbody:path $(, $ffix:path)? ; )* }
        sized { $( $(#[$sdoc:meta])* $sized:ident => $sspec:path, $sbody:path ; )* }
    ) => {
        /// One kernel of the catalogue, in the order of
        /// [`for_each_kernel!`](crate::for_each_kernel!) (the host's `Kernel` without its
        /// launch parameters).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum KernelId {
            $( $fixed, )*
            $( $sized, )*
        }

        fn body_of<D: Element>(id: KernelId) -> Option<Body<D>> {
            match id {
                $( KernelId::$fixed => body_table!(@host $fbody), )*
                $( KernelId::$sized => body_table!(@host $sbody), )*
            }
        }

        fn fixup_body_of<D: Element>(id: KernelId) -> Option<Body<D>> {
            match id {
                $( KernelId::$fixed => body_table!(@fixup $($ffix)?), )*
                $( KernelId::$sized => None, )*
            }
        }
    };
    (@fixup) => { None };
    (@fixup $f:path) => { body_table!(@host $f) };
    // A body's module of the same name holds its bodies by element type (`entry_points!`).
    (@host $f:path) => {{
        use $f as body;
        body::host::<D>()
    }};
}
crate::for_each_kernel!(body_table);

/// The element types whose kernel bodies this crate compiles for the CPU executor.
pub trait HostBodies: Element {
    /// The body of kernel `id`'s (main) launch, where the kernel takes this element type.
    fn body(id: KernelId) -> Option<Body<Self>>;
    /// The body of kernel `id`'s second launch (a fix-up or a pack), if it has one.
    fn fixup_body(id: KernelId) -> Option<Body<Self>>;
}

macro_rules! host_bodies {
    ($($t:ty),*) => {$(
        impl HostBodies for $t {
            // Not inlined: a caller in another crate must link to these bodies, not copy them.
            #[inline(never)]
            fn body(id: KernelId) -> Option<Body<Self>> {
                body_of::<Self>(id)
            }
            #[inline(never)]
            fn fixup_body(id: KernelId) -> Option<Body<Self>> {
                fixup_body_of::<Self>(id)
            }
        }
    )*};
}
host_bodies!(f32, f64, F16, Bf16, Narrow<F16>, Narrow<Bf16>);
