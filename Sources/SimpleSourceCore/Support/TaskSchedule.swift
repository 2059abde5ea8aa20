// The one place the package starts tasks, so that a test's seeded schedule can run every one of them.

/// What a seeded schedule (`SimpleSourceTesting`'s `exploreSchedules(count:_:)`) offers the tasks it runs:
/// its executor, and a record of which tasks are running and what each awaits, for its deadlock reports.
///
/// Without a schedule, ``TaskSchedule/host`` is `nil` and nothing here costs more than reading it.
@usableFromInline package protocol TaskScheduleHost: AnyObject, Sendable {
  /// The executor that runs every job of the schedule, one at a time, in the order the schedule chooses.
  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  var taskExecutor: any TaskExecutor { get }

  /// The schedule's virtual time, in nanoseconds: it moves only when nothing can run, so the package's own
  /// time-based decisions (how long a cut waits for more mutations) take the same course in every replay.
  var nanoseconds: UInt64 { get }

  /// Records that a task named `name` started under the schedule, and returns its number.
  func taskStarted(_ name: String) -> Int
  /// Records that task `task` returned.
  func taskFinished(_ task: Int)
  /// Records that task `task` began to wait for `label`, and returns the wait's number.
  func waitBegan(_ label: String, task: Int) -> Int
  /// Records that wait `wait` ended.
  func waitEnded(_ wait: Int)
}

/// The schedule the current task runs under, if any: a task-local that reaches every task the package starts.
@usableFromInline package enum TaskSchedule {
  /// The current schedule; `nil` outside a seeded schedule.
  @usableFromInline @TaskLocal package static var host: (any TaskScheduleHost)?
  /// The number the schedule gave the current task (0: the test's body).
  @usableFromInline @TaskLocal package static var task = 0

  /// Records under the current schedule (when there is one) that the current task begins to await `label`,
  /// so that a deadlock report can say what each task waits for; pass what it returns to ``endWait(_:)``
  /// when the wait is over.
  ///
  /// Not a closure around the wait: a continuation must stay in its caller's frame, or the frame the wait
  /// leaves behind is reused while the resuming thread may still read it (ThreadSanitizer reports that).
  ///
  /// - Complexity: O(1) and one task-local read without a schedule.
  @inlinable
  package static func beginWait(_ label: @autoclosure () -> String) -> (any TaskScheduleHost, Int)? {
    guard let host else { return nil }
    return (host, host.waitBegan(label(), task: task))
  }

  /// Ends a wait ``beginWait(_:)`` began.
  @inlinable
  package static func endWait(_ wait: (any TaskScheduleHost, Int)?) {
    if let (host, number) = wait { host.waitEnded(number) }
  }
}

extension Task where Failure == Never {
  /// Starts an unstructured task, as `Task(priority:operation:)` does, that runs under the test's seeded
  /// schedule when it is started from one.
  ///
  /// `Task { … }` does not inherit a task executor preference, so a task it starts during a seeded schedule
  /// runs outside it, on the global executor, where the schedule cannot order it. Every task the package
  /// starts (publishing, following, sessions, replicas) goes through here; start your own the same way to
  /// put them under the schedule too. Without a schedule this is `Task(priority:operation:)`.
  ///
  /// ```swift
  /// let refresh = Task.schedulable("refresh") { await model.reload() }
  /// ```
  ///
  /// - Parameters:
  ///   - name: What a deadlock report calls the task.
  ///   - priority: The task's priority.
  ///   - operation: The task's work, isolated as the closure is.
  /// - Returns: The task.
  /// - Complexity: O(1).
  @discardableResult
  public static func schedulable(
    _ name: String, priority: TaskPriority? = nil,
    @_inheritActorContext @_implicitSelfCapture operation:
      sending @escaping @isolated(any) () async -> Success
  ) -> Task<Success, Never> {
    if #available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *), let host = TaskSchedule.host {
      return Task(executorPreference: host.taskExecutor, priority: priority) {
        let task = host.taskStarted(name)
        defer { host.taskFinished(task) }
        return await TaskSchedule.$task.withValue(task) { await operation() }
      }
    }
    return Task(priority: priority, operation: operation)
  }
}

extension Task where Failure == any Error {
  /// Starts an unstructured throwing task, as `Task(priority:operation:)` does, that runs under the test's
  /// seeded schedule when it is started from one: the throwing form of `Task.schedulable(_:priority:operation:)`.
  ///
  /// - Parameters:
  ///   - name: What a deadlock report calls the task.
  ///   - priority: The task's priority.
  ///   - operation: The task's work, isolated as the closure is.
  /// - Returns: The task.
  /// - Complexity: O(1).
  @discardableResult
  public static func schedulable(
    _ name: String, priority: TaskPriority? = nil,
    @_inheritActorContext @_implicitSelfCapture operation:
      sending @escaping @isolated(any) () async throws
      -> Success
  ) -> Task<Success, any Error> {
    if #available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *), let host = TaskSchedule.host {
      return Task(executorPreference: host.taskExecutor, priority: priority) {
        let task = host.taskStarted(name)
        defer { host.taskFinished(task) }
        return try await TaskSchedule.$task.withValue(task) { try await operation() }
      }
    }
    return Task(priority: priority, operation: operation)
  }
}
