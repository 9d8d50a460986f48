// chromium-cleanup.h: no Chromium and no temporary profile outlive kvarena. Every running
// chromium_process (chromium-process.h) is registered here with its process group and its
// temporary directory (/tmp/kvarena-chromium-<kvarena pid>-XXXXXX):
//   - normal exit: chromium_process's destructor kills the group and removes the directory;
//   - SIGTERM / SIGINT / SIGHUP: install_chromium_signal_cleanup() (kvarena's main) kills
//     every registered group and removes every directory from the signal handler, then
//     dies of the signal as before; commands with their own handlers call
//     chromium_cleanup_for_exit() where they quit at once;
//   - SIGKILL (nothing can run): Chromium dies through PR_SET_PDEATHSIG, and the directory
//     is removed by the next kvarena that starts a Chromium (remove_stale_chromium_dirs:
//     directories whose kvarena pid is gone).
// The registry is a fixed array of atomics, so the signal handler reads it safely.
#pragma once
#include <sys/types.h>

#include <string>

namespace kvarena {

// The prefix of every Chromium temporary directory of this kvarena: /tmp/kvarena-chromium-<pid>-
std::string chromium_temp_prefix(pid_t kvarena_pid);

// Registers the temporary directory of a Chromium about to start (before the fork, so a
// signal at any moment finds it), then its process group once forked; returns a slot for
// unregister_chromium, -1 when all slots are taken (then only the destructor cleans it).
int register_chromium(const std::string& temp_dir);
void set_chromium_group(int slot, pid_t process_group);
void unregister_chromium(int slot);

// Async-signal-safe: SIGKILL to every registered process group, then removes every
// registered directory (raw syscalls only). Idempotent.
void chromium_cleanup_now() noexcept;

// chromium_cleanup_now() for a kvarena about to end: from then on a thread that starts a
// Chromium (its old one was just killed) removes the new directory itself and waits for
// the end instead of starting it. Async-signal-safe.
void chromium_cleanup_for_exit() noexcept;

// SIGTERM, SIGINT and SIGHUP handlers that call chromium_cleanup_for_exit() and then re-raise
// the signal with its default action (so the exit status is the signal's).
void install_chromium_signal_cleanup();

// Removes <folder>/kvarena-chromium-<pid>-* directories whose kvarena process no longer
// exists (left by a kvarena killed with SIGKILL); returns how many. Only directories owned
// by this user are touched (not symlinks, not other users' in a shared /tmp); a name whose
// pid is not a pid (20 digits) is skipped, never an exception.
int remove_stale_chromium_dirs(const std::string& folder = "/tmp");

}  // namespace kvarena
