// The Swift Testing trait that runs a test under many seeded schedules.

public import Testing

/// Runs a test under seeded schedules, as ``exploreSchedules(count:quietPeriod:maxSteps:_:)`` does, and
/// records the first failing schedule, shrunk, as an issue that says how to replay it.
///
/// Spelled `.seededSchedules(_:)` on `@Test` (its other parameters have defaults).
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
public struct SeededSchedules: TestTrait, TestScoping {
  /// How many schedules to run (times `SIMPLESOURCE_SCHEDULE_SCALE` when it is set).
  public let count: Int
  /// How long an idle run waits for a wake from outside the schedule before it calls the state a deadlock.
  public let quietPeriod: Duration
  /// The most jobs one schedule runs before it fails as too long.
  public let maxSteps: Int

  /// Runs the test's body under ``count`` schedules; a failure is recorded as an issue at the test's own
  /// source location, not thrown.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    if let failure = try await failure(performing: function) {
      let (comment, location) = Self.issue(for: failure, in: test)
      Issue.record(comment, sourceLocation: location)
    }
  }

  /// What the issue for `failure` says, and where: at the test's own declaration.
  static func issue(for failure: ScheduleFailure, in test: Test) -> (Comment, SourceLocation) {
    (Comment(rawValue: "\(failure)"), test.sourceLocation)
  }

  /// The failing schedule, shrunk, when the body fails under one of ``count`` schedules; `nil` when every
  /// schedule passes. Other errors are thrown.
  func failure(performing function: @Sendable () async throws -> Void) async throws -> ScheduleFailure? {
    do {
      try await exploreSchedules(count: count, quietPeriod: quietPeriod, maxSteps: maxSteps, function)
      return nil
    } catch let failure as ScheduleFailure {
      return failure
    }
  }
}

@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
extension Trait where Self == SeededSchedules {
  /// Runs the test under `count` seeded schedules, stops at the first that fails, shrinks it to the fewest
  /// preemptions that still fail, and records an issue naming it: `SIMPLESOURCE_SCHEDULE_SEED=<schedule>`
  /// replays it alone.
  ///
  /// ```swift
  /// @Test(.seededSchedules(100))
  /// func bothWritersKeepTheirItems() async throws {
  ///   let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
  ///   async let first = source.appendItems([TestItem("a")], toSection: "inbox")
  ///   async let second = source.appendItems([TestItem("b")], toSection: "inbox")
  ///   _ = try await (first, second)
  ///   #expect(await source.snapshot.itemCount == 2)
  /// }
  /// ```
  ///
  /// What a schedule controls, and what it cannot, is listed at
  /// ``exploreSchedules(count:quietPeriod:maxSteps:_:)``.
  ///
  /// - Parameters:
  ///   - count: How many schedules to run (times `SIMPLESOURCE_SCHEDULE_SCALE` when it is set).
  ///   - quietPeriod: How long an idle run waits for a wake from outside the schedule before it calls the
  ///     state a deadlock.
  ///   - maxSteps: The most jobs one schedule runs before it fails as too long.
  public static func seededSchedules(
    _ count: Int, quietPeriod: Duration = .seconds(2), maxSteps: Int = 1_000_000
  ) -> Self {
    SeededSchedules(count: count, quietPeriod: quietPeriod, maxSteps: maxSteps)
  }
}
