//! Parts of resident buffers: a write at an offset and a device-to-device copy between byte
//! ranges of two buffers (a host loop over MPI ranks moves only a step's halo rows through
//! the host; its own rows go from the result buffer to the next input on the device).

use super::Session;
use crate::error::{cl, Error};
use crate::Resident;
use opencl3::types::CL_BLOCKING;

impl Session {
    /// Blocking write of `data` into `r` from byte `offset`.
    pub fn write_at(&mut self, r: Resident, offset: usize, data: &[u8]) -> Result<(), Error> {
        let (buf, bytes) = &mut self.resident[r.0];
        if offset + data.len() > *bytes {
            return Err(Error::InvalidPlan(format!(
                "write of {} bytes at {offset} into a buffer of {bytes}",
                data.len()
            )));
        }
        if !data.is_empty() {
            // SAFETY: blocking write of `data.len()` bytes inside the buffer (checked above).
            unsafe { self.queue.enqueue_write_buffer(buf, CL_BLOCKING, offset, data, &[]) }
                .map_err(cl("clEnqueueWriteBuffer"))?;
        }
        Ok(())
    }

    /// Enqueues a copy of `len` bytes from byte `from` of `src` to byte `to` of `dst` (two
    /// buffers).
    pub fn copy_range(
        &mut self,
        src: Resident,
        from: usize,
        dst: Resident,
        to: usize,
        len: usize,
    ) -> Result<(), Error> {
        if src == dst || from + len > self.resident[src.0].1 || to + len > self.resident[dst.0].1 {
            return Err(Error::InvalidPlan(format!(
                "copy of {len} bytes from {from} of buffer {} to {to} of buffer {}",
                src.0, dst.0
            )));
        }
        if len == 0 {
            return Ok(());
        }
        let (lo, hi) = self.resident.split_at_mut(src.0.max(dst.0));
        let (s, d) = if src.0 < dst.0 {
            (&lo[src.0].0, &mut hi[0].0)
        } else {
            (&hi[0].0, &mut lo[dst.0].0)
        };
        // SAFETY: both ranges lie inside their buffers (checked above).
        unsafe { self.queue.enqueue_copy_buffer(s, d, from, to, len, &[]) }.map_err(cl("clEnqueueCopyBuffer"))?;
        Ok(())
    }
}
