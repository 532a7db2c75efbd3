//! Transparent huge pages, off for `agora run`.
//!
//! mimalloc asks for huge pages on its arenas, and where the kernel compacts memory to make
//! one when it is first touched (THP defrag `madvise`, a common default), a recorded naming
//! study spent up to half its time in the kernel whenever another process had just churned
//! memory: 0.17 s alone, 0.23-0.34 s right after a 2-second study, with 0.16-0.25 s of system
//! time instead of 0.06-0.09 s; 0.16-0.18 s either way without huge pages. `agora network`
//! keeps them: its populations of up to 10^6 agents are read at random across tens of
//! megabytes, and without huge pages it ran 20-45 % slower on sparse networks of 10^6 agents.

/// Turns transparent huge pages off for the rest of this process's life
/// (`PR_SET_THP_DISABLE`); called before a study's runs start. A kernel that refuses leaves
/// the default.
#[cfg(target_os = "linux")]
#[expect(unsafe_code, reason = "prctl has no safe wrapper in libc")]
pub fn none() {
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Huge pages are a Linux setting; elsewhere there is nothing to turn off.
#[cfg(not(target_os = "linux"))]
pub fn none() {}
