//! The stencil suite (`bench/stencil/`): placeholder, filled in below.
