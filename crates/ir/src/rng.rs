//! A small deterministic random generator (xorshift64*) for random inputs and the test
//! generators: the same seed gives the same stream on every machine.

pub struct XorShift(u64);

impl XorShift {
    /// Seeded through splitmix64, so that nearby seeds give unrelated streams.
    pub fn new(seed: u64) -> XorShift {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift::from_state(z)
    }

    /// Starts from `state` itself (0, which xorshift never leaves, becomes 1).
    pub fn from_state(state: u64) -> XorShift {
        XorShift(if state == 0 { 1 } else { state })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform enough in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
