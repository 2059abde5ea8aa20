// A lock and the state it guards, inseparable: the one place the package needs a lock.

#if canImport(Darwin)
  public import Darwin
#elseif canImport(Glibc)
  public import Glibc
#elseif canImport(Musl)
  public import Musl
#elseif canImport(Android)
  public import Android
#endif

/// State that is only reachable while its lock is held.
///
/// SimpleSource's one lock, shared by every module of the package (the test kit's too) and by its inlined
/// code, and by no one else: it is `package`, not public. `Synchronization.Mutex` would do, but needs
/// iOS 18 / macOS 15; a `pthread_mutex_t` exists on every platform the package supports, and lives here
/// in the same allocation as the state, so that taking the lock touches one object (an `NSLock` is an
/// object of its own around a mutex allocated apart: three cold cache lines per lock, which a broadcast
/// writing to thousands of sessions paid for each). Decide under the lock, act outside it: `withLock`
/// returns what to do, and the caller resumes continuations after it returns.
///
/// Safe as `Sendable` (unchecked, because `ManagedBuffer` is not): the state is only read or written
/// inside `withLock`, which holds the mutex for the whole access, and `State` is Sendable, so nothing read
/// out of it is tied to a thread.
@usableFromInline package struct Locked<State: Sendable>: @unchecked Sendable {
  @usableFromInline let storage: LockedStorage<State>

  /// Creates the lock around `state`.
  /// - Complexity: O(1): one allocation.
  @inlinable
  package init(_ state: State) { storage = LockedStorage.make(state) }

  /// Runs `body` with the state while holding the lock. Always inlined: in unspecialized generic code
  /// (a source's per-subscriber loop) a call would look up the state's type metadata each time.
  @inlinable @inline(__always)
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    try storage.withLock(body)
  }
}

/// The state (the buffer's header) and its mutex (the buffer's one element), in one allocation; only
/// ``Locked`` reaches it.
@usableFromInline final class LockedStorage<State: Sendable>: ManagedBuffer<State, pthread_mutex_t> {
  @inlinable
  static func make(_ state: State) -> LockedStorage {
    let buffer = create(minimumCapacity: 1) { _ in state }
    buffer.withUnsafeMutablePointerToElements { mutex in
      mutex.initialize(to: pthread_mutex_t())
      let status = pthread_mutex_init(mutex, nil)
      precondition(status == 0, "SimpleSource: pthread_mutex_init failed (\(status))")
    }
    return unsafeDowncast(buffer, to: LockedStorage.self)
  }

  deinit {
    withUnsafeMutablePointerToElements { mutex in
      pthread_mutex_destroy(mutex)
      mutex.deinitialize(count: 1)
    }
  }

  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    try withUnsafeMutablePointers { state, mutex in
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return try body(&state.pointee)
    }
  }
}
