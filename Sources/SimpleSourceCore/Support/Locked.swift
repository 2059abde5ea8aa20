// A lock and the state it guards, inseparable: the one place the package needs a lock.

public import Foundation

/// State that is only reachable while its lock is held.
///
/// SimpleSource's one lock, shared by every module of the package (the test kit's too) and by its inlined
/// code, and by no one else: it is `package`, not public. `Synchronization.Mutex` would do, but needs
/// iOS 18 / macOS 15; `NSLock` exists on every platform the package supports. Decide under the lock, act
/// outside it: `withLock` returns what to do, and the caller resumes continuations after it returns.
/// Safe as `Sendable` because the state is only reached under the lock (see `state`).
@usableFromInline package final class Locked<State: Sendable>: @unchecked Sendable {
  // Safe: `state` is only read or written inside `withLock`, which holds `lock` for the whole access;
  // `State` is Sendable, so nothing read out of it is tied to this thread.
  @usableFromInline var state: State
  @usableFromInline let lock = NSLock()

  /// Creates the lock around `state`.
  @inlinable
  package init(_ state: State) { self.state = state }

  /// Runs `body` with the state while holding the lock.
  @inlinable
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&state)
  }
}
