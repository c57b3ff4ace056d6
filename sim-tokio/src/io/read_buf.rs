use std::fmt;
use std::mem::MaybeUninit;

/// A buffer being filled by a read: a filled part, an initialized part and
/// uninitialized capacity.
pub struct ReadBuf<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    filled: usize,
    initialized: usize,
}

impl<'a> ReadBuf<'a> {
    /// Wraps an initialized buffer.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> ReadBuf<'a> {
        let initialized = buf.len();
        // SAFETY: `u8` and `MaybeUninit<u8>` share a layout, and the bytes
        // are never de-initialized through this view.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        ReadBuf {
            buf,
            filled: 0,
            initialized,
        }
    }

    /// Wraps an uninitialized buffer.
    #[inline]
    pub fn uninit(buf: &'a mut [MaybeUninit<u8>]) -> ReadBuf<'a> {
        ReadBuf {
            buf,
            filled: 0,
            initialized: 0,
        }
    }

    /// The buffer's size.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The filled part.
    #[inline]
    pub fn filled(&self) -> &[u8] {
        // SAFETY: the filled part is initialized.
        unsafe { &*(&self.buf[..self.filled] as *const [MaybeUninit<u8>] as *const [u8]) }
    }

    /// The filled part, mutably.
    #[inline]
    pub fn filled_mut(&mut self) -> &mut [u8] {
        // SAFETY: the filled part is initialized.
        unsafe { &mut *(&mut self.buf[..self.filled] as *mut [MaybeUninit<u8>] as *mut [u8]) }
    }

    /// A `ReadBuf` over the unfilled part (capped at `n` bytes).
    #[inline]
    pub fn take(&mut self, n: usize) -> ReadBuf<'_> {
        let max = std::cmp::min(self.remaining(), n);
        // SAFETY: the new buffer never de-initializes bytes.
        unsafe { ReadBuf::uninit(&mut self.unfilled_mut()[..max]) }
    }

    /// The initialized part.
    #[inline]
    pub fn initialized(&self) -> &[u8] {
        // SAFETY: the initialized part is initialized.
        unsafe { &*(&self.buf[..self.initialized] as *const [MaybeUninit<u8>] as *const [u8]) }
    }

    /// The initialized part, mutably.
    #[inline]
    pub fn initialized_mut(&mut self) -> &mut [u8] {
        // SAFETY: the initialized part is initialized.
        unsafe { &mut *(&mut self.buf[..self.initialized] as *mut [MaybeUninit<u8>] as *mut [u8]) }
    }

    /// The whole buffer, as uninitialized memory.
    ///
    /// # Safety
    /// The caller must not de-initialize bytes that were initialized.
    #[inline]
    pub unsafe fn inner_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        self.buf
    }

    /// The unfilled part, as uninitialized memory.
    ///
    /// # Safety
    /// The caller must not de-initialize bytes that were initialized.
    #[inline]
    pub unsafe fn unfilled_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        &mut self.buf[self.filled..]
    }

    /// The unfilled part, initialized (zeroing what was not).
    #[inline]
    pub fn initialize_unfilled(&mut self) -> &mut [u8] {
        self.initialize_unfilled_to(self.remaining())
    }

    /// The first `n` unfilled bytes, initialized.
    ///
    /// # Panics
    /// When `n` exceeds what remains.
    #[track_caller]
    #[inline]
    pub fn initialize_unfilled_to(&mut self, n: usize) -> &mut [u8] {
        assert!(self.remaining() >= n, "n overflows remaining");
        let end = self.filled + n;
        if self.initialized < end {
            for byte in &mut self.buf[self.initialized..end] {
                byte.write(0);
            }
            self.initialized = end;
        }
        // SAFETY: just initialized.
        unsafe { &mut *(&mut self.buf[self.filled..end] as *mut [MaybeUninit<u8>] as *mut [u8]) }
    }

    /// How many bytes can still be filled.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.capacity() - self.filled
    }

    /// Forgets the filled part.
    #[inline]
    pub fn clear(&mut self) {
        self.filled = 0;
    }

    /// Grows the filled part by `n` initialized bytes.
    ///
    /// # Panics
    /// When that would pass the initialized part.
    #[track_caller]
    #[inline]
    pub fn advance(&mut self, n: usize) {
        let new = self.filled.checked_add(n).expect("filled overflow");
        self.set_filled(new);
    }

    /// Sets the filled length.
    ///
    /// # Panics
    /// When `n` is past the initialized part.
    #[track_caller]
    #[inline]
    pub fn set_filled(&mut self, n: usize) {
        assert!(
            n <= self.initialized,
            "filled must not become larger than initialized"
        );
        self.filled = n;
    }

    /// Declares the first `n` unfilled bytes initialized.
    ///
    /// # Safety
    /// They must be initialized.
    #[inline]
    pub unsafe fn assume_init(&mut self, n: usize) {
        let new = self.filled + n;
        if new > self.initialized {
            self.initialized = new;
        }
    }

    /// Appends `buf` to the filled part.
    ///
    /// # Panics
    /// When it does not fit.
    #[track_caller]
    #[inline]
    pub fn put_slice(&mut self, buf: &[u8]) {
        assert!(
            self.remaining() >= buf.len(),
            "buf.len() must fit in remaining(); buf.len() = {}, remaining() = {}",
            buf.len(),
            self.remaining()
        );
        let amt = buf.len();
        let end = self.filled + amt;
        // SAFETY: `MaybeUninit<u8>` and `u8` share a layout.
        unsafe {
            self.buf[self.filled..end]
                .as_mut_ptr()
                .cast::<u8>()
                .copy_from_nonoverlapping(buf.as_ptr(), amt);
        }
        if self.initialized < end {
            self.initialized = end;
        }
        self.filled = end;
    }
}

impl fmt::Debug for ReadBuf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadBuf")
            .field("filled", &self.filled)
            .field("initialized", &self.initialized)
            .field("capacity", &self.capacity())
            .finish()
    }
}

// SAFETY: `chunk_mut` exposes only the unfilled part, and `advance_mut`
// marks as filled only bytes the caller initialized, as `BufMut` requires.
unsafe impl bytes_dep::BufMut for ReadBuf<'_> {
    fn remaining_mut(&self) -> usize {
        self.remaining()
    }

    unsafe fn advance_mut(&mut self, cnt: usize) {
        self.assume_init(cnt);
        self.advance(cnt);
    }

    fn chunk_mut(&mut self) -> &mut bytes_dep::buf::UninitSlice {
        // SAFETY: the unfilled part is only written, never de-initialized.
        let unfilled = unsafe { self.unfilled_mut() };
        let len = unfilled.len();
        let ptr = unfilled.as_mut_ptr() as *mut u8;
        // SAFETY: the pointer and length describe the unfilled part.
        unsafe { bytes_dep::buf::UninitSlice::from_raw_parts_mut(ptr, len) }
    }
}
