//! The packed parameters of a tiled stencil (`stencil` e-graph nodes, `rules::stencil`,
//! `lower::stencil`): the windows of each dimension, the outputs of a tile in each dimension,
//! and whether the tile is staged in local memory. Nothing here depends on another module of
//! the crate.

/// A stencil `map^d f (slide^d (n, s) x)` of `d` dimensions (outermost first), tiled in
/// `u` outputs per dimension: each work-group computes one `u[0] × … × u[d-1]` tile of
/// outputs, one output per work-item, from its input tile of `(u - 1)·s + n` elements per
/// dimension (its halo included), copied into local memory by the work-group when `staged`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StencilTile {
    pub dims: usize,
    /// Window size and step per dimension, outermost first (each below 16).
    pub n: [i64; 3],
    pub s: [i64; 3],
    /// Outputs of a tile per dimension, outermost first (each below 1024).
    pub u: [i64; 3],
    pub staged: bool,
    /// The function returns a one-element array (a reduction over its window) that the map
    /// over the innermost dimension joins: `λr. join (map f r)`.
    pub joined: bool,
    /// Outputs each work-item computes down the outermost dimension from its strip of the
    /// input held in private memory (registers), read once from global memory; 1: one output
    /// a work-item (a power of two, at most 128). A 3-D column's work-item computes `u[1]`
    /// rows of each of its planes (a block of `column × u[1]` outputs; `u[0]` is `column`).
    pub column: i64,
    /// 0: `f` reads its window alone; `p + 1`: `f` reads tuples whose component `p` is its
    /// window and whose others are the points of further grids at the window's output
    /// (`map f (zip (slide2d … x) g)`, hotspot's temperature windows and power), `p` below 3.
    pub zipped: i64,
}

impl StencilTile {
    /// One number for the e-graph node: 10 bits per tile side, 4 per window and step, 3 for
    /// the column's log, 2 for `zipped`.
    pub fn pack(self) -> i64 {
        let mut c = self.dims as i64
            | i64::from(self.staged) << 2
            | i64::from(self.joined) << 60
            | i64::from(self.column.max(1).trailing_zeros()) << 57
            | (self.zipped & 3) << 61;
        for d in 0..3 {
            c |= self.u[d] << (3 + 10 * d);
            c |= self.n[d] << (33 + 8 * d);
            c |= self.s[d] << (37 + 8 * d);
        }
        c
    }

    pub fn unpack(c: i64) -> StencilTile {
        let mut t = StencilTile {
            dims: (c & 3) as usize,
            n: [0; 3],
            s: [0; 3],
            u: [0; 3],
            staged: c >> 2 & 1 == 1,
            joined: c >> 60 & 1 == 1,
            column: 1 << (c >> 57 & 7),
            zipped: c >> 61 & 3,
        };
        for d in 0..3 {
            t.u[d] = c >> (3 + 10 * d) & 0x3ff;
            t.n[d] = c >> (33 + 8 * d) & 0xf;
            t.s[d] = c >> (37 + 8 * d) & 0xf;
        }
        t
    }

    /// Input elements of a tile along dimension `d`: its `u` windows and their halo.
    pub fn extent(&self, d: usize) -> i64 {
        (self.u[d] - 1) * self.s[d] + self.n[d]
    }

    /// Work-items of a work-group: one per output of the tile.
    pub fn group(&self) -> i64 {
        self.u[..self.dims].iter().product()
    }

    /// Input elements a work-group reads (its tile with the halo).
    pub fn tile_elems(&self) -> i64 {
        (0..self.dims).map(|d| self.extent(d)).product()
    }

    /// Elements of one window (what each output reads without the tile, at most).
    pub fn window_elems(&self) -> i64 {
        self.n[..self.dims].iter().product()
    }

    /// `16x32`, `8x8x4`, with `/global` when the tile is not staged; `column 4` for a column
    /// of 4 outputs a work-item.
    pub fn name(&self) -> String {
        if self.column > 1 && self.dims == 3 && self.u[1] > 1 {
            return format!("column {}x{}", self.column, self.u[1]);
        }
        if self.column > 1 {
            return format!("column {}", self.column);
        }
        let sides: Vec<String> = self.u[..self.dims].iter().map(|u| u.to_string()).collect();
        format!("{}{}", sides.join("x"), if self.staged { "" } else { "/global" })
    }
}

/// The window size and step of an `Other` head's text `slide #n #s` (constants below 16).
pub fn slide_params(head: &str) -> Option<(i64, i64)> {
    let mut parts = head.split('|').next()?.split_whitespace();
    if parts.next()? != "slide" {
        return None;
    }
    let mut num = || parts.next()?.trim_start_matches('#').parse::<i64>().ok();
    let (n, s) = (num()?, num()?);
    (0 < s && s <= n && n < 16).then_some((n, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stencil_tiles_pack_and_unpack_to_the_same_sizes() {
        let t = StencilTile {
            dims: 3,
            n: [3, 5, 3],
            s: [1, 2, 1],
            u: [4, 8, 64],
            staged: true,
            joined: true,
            column: 1,
            zipped: 0,
        };
        assert_eq!(StencilTile::unpack(t.pack()), t);
        assert_eq!(t.extent(1), 19);
        assert_eq!(t.name(), "4x8x64");
        let c = StencilTile {
            column: 8,
            u: [8, 1, 1],
            ..t
        };
        assert_eq!(StencilTile::unpack(c.pack()), c);
        assert_eq!(c.name(), "column 8");
        let b = StencilTile {
            column: 4,
            u: [4, 2, 1],
            ..t
        };
        assert_eq!(StencilTile::unpack(b.pack()), b);
        assert_eq!(b.name(), "column 4x2");
        let z = StencilTile { zipped: 3, ..c };
        assert_eq!(StencilTile::unpack(z.pack()), z);
        assert!(z.pack() > 0);
    }

    #[test]
    fn slide_heads_give_their_window_and_step() {
        assert_eq!(slide_params("slide #3 #1|4"), Some((3, 1)));
        assert_eq!(slide_params("pad-clamp #1 #1|2"), None);
        assert_eq!(slide_params("slide #40 #1|2"), None);
    }
}
