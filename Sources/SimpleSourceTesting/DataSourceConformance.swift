// A conformance check for any DataSourceType: random concurrent mutations, several kinds of subscriber,
// every guarantee checked by BatchRecorder.

public import SimpleSource

/// Checks that a `DataSourceType` keeps the contract (G1–G7, G10, G13) under random concurrent mutations.
///
/// Each run makes a fresh source and follows it with four subscribers while several tasks mutate it
/// through your closure:
/// - **steady**: consumes every batch as it comes (G1 order, G2 exactness, G3 UIKit-valid, G4 nothing
///   empty, all checked by ``BatchRecorder`` on every batch);
/// - **stalled**: subscribes first and reads nothing until the writers are done, then gets at most one
///   composed batch (G6);
/// - **cancelled**: stops halfway; it must end, and (with ``subscriberCount``) be released (G7);
/// - **late**: subscribes halfway, while writers run, and must continue exactly from its snapshot (G5).
///
/// After `settled()` (G10) every live subscriber must show the source's snapshot, the steady one's
/// subscription must hold the source's version (G13), and the source's version must not move again. A
/// source that follows a driver is also compared with what the driver says it must show, when given
/// (`expecting:`): a derived source that settles on a wrong state is found even when every batch it
/// published was valid.
///
/// ```swift
/// @Test func myFeedKeepsTheContract() async {
///   let conformance = DataSourceConformance(makeSource: { try MyFeed() }) { feed, random in
///     try await feed.apply(.random(using: &random))
///   }
///   let report = await conformance.run(seed: RandomTestSettings.current(defaultCases: 20).seed)
///   #expect(report.passed, "\(report)")
/// }
/// ```
///
/// A source that changes because something else changes (a feed, a database, a parent source) is checked
/// through that driver: make both, and mutate the driver. The source itself needs no method for tests.
///
/// ```swift
/// let conformance = DataSourceConformance(
///   makeSource: {
///     let database = FakeDatabase()
///     return (source: try await Inbox(following: database), driver: database)
///   },
///   drive: { database, random in try await database.insert(.random(using: &random)) })
/// ```
///
/// A source that never reaches a state it promised would make a test hang; instead each wait is bounded
/// by ``timeoutSeconds`` and reported as a failure (a guard against hangs, not a way of waiting).
public struct DataSourceConformance<Source: DataSourceType>: Sendable {
  /// The section type.
  public typealias Section = Source.Section

  /// One run's source, and what makes one random mutation of it (through its driver, if it has one).
  struct Run: Sendable {
    let source: Source
    let mutate: @Sendable (inout SeededGenerator) async throws -> Void
    /// What the source must show once settled, made from its driver; `nil` when not given.
    let expected: (@Sendable () async -> Snapshot<Section>)?
  }

  /// Makes a fresh source, and its driver, for one run.
  let makeRun: @Sendable () async throws -> Run
  /// The number of the source's live subscriptions, when it can tell (checks release, G7).
  public var subscriberCount: (@Sendable (Source) async -> Int)?
  /// How many runs, each with a fresh source.
  public var runs = 20
  /// How many tasks mutate at once.
  public var writers = 3
  /// How many mutations each writer makes per run.
  public var mutationsPerWriter = 30
  /// How long a subscriber may take to reach a promised state before it is reported. After the first
  /// wait for the source's snapshot that times out, the run's later waits for it, and the checks that
  /// need them, are skipped (they would wait for the same missing state), so a source that never settles
  /// is reported after one time-out, not one per check; the wait for the held version (G13) still runs.
  public var timeoutSeconds = 10.0
  /// Whether the check ends after the first run that fails (the default): its failures say what is
  /// wrong, and later runs would repeat them at the cost of their waits. Set it to `false` to count how
  /// many runs fail.
  public var stopsAtFirstFailingRun = true

  /// Creates a check of a source mutated directly.
  /// - Parameters:
  ///   - makeSource: Makes a fresh source for one run.
  ///   - subscriberCount: The number of the source's live subscriptions, if it can tell.
  ///   - mutate: Makes one random mutation of the source, drawing from the generator; it may throw or
  ///     change nothing (that is checked too: G4, G8).
  public init(
    makeSource: @escaping @Sendable () async throws -> Source,
    subscriberCount: (@Sendable (Source) async -> Int)? = nil,
    mutate: @escaping @Sendable (Source, inout SeededGenerator) async throws -> Void
  ) {
    self.init(
      makeSource: {
        let source = try await makeSource()
        return (source, source)
      },
      subscriberCount: subscriberCount, drive: mutate)
  }

  /// Creates a check of a source that follows a driver: a feed, a database, a parent source, which the
  /// writers mutate. The run keeps the driver until it ends.
  ///
  /// With `expecting`, the check also compares the source's own state with what its driver says it must
  /// show: after `settled()` (G10) the source's `snapshot` must equal what `expecting`
  /// makes of the driver then (a derived source's rule applied to its parent's snapshot, say): the same
  /// sections, in order, with equal contents (`isContentEqual(to:)`) and the same items. The
  /// subscribers' checks only say that they follow the source; this one says that the source shows what
  /// it should, so a derived source that settles on a wrong state is found even when every batch it
  /// published was valid.
  ///
  /// - Parameters:
  ///   - makeSource: Makes a fresh source and its driver for one run.
  ///   - subscriberCount: The number of the source's live subscriptions, if it can tell.
  ///   - expecting: What the source must show once settled, made from the source and its driver when no
  ///     writer runs; `nil` (the default) checks the subscribers against the source only.
  ///   - drive: Makes one random mutation of the driver, drawing from the generator; it may throw or
  ///     change nothing. The source's `settled()` must cover what the driver was told before it (G10).
  public init<Driver: Sendable>(
    makeSource: @escaping @Sendable () async throws -> (source: Source, driver: Driver),
    subscriberCount: (@Sendable (Source) async -> Int)? = nil,
    expecting: (@Sendable (Source, Driver) async -> Snapshot<Section>)? = nil,
    drive: @escaping @Sendable (Driver, inout SeededGenerator) async throws -> Void
  ) {
    makeRun = {
      let (source, driver) = try await makeSource()
      var expected: (@Sendable () async -> Snapshot<Section>)?
      if let expecting { expected = { await expecting(source, driver) } }
      return Run(source: source, mutate: { random in try await drive(driver, &random) }, expected: expected)
    }
    self.subscriberCount = subscriberCount
  }

  /// Runs the check.
  /// - Parameter seed: The seed of the first run; the report names it, so a failure replays.
  /// - Returns: What was checked and every failure.
  public func run(seed: UInt64) async -> ConformanceReport {
    var report = ConformanceReport(seed: seed)
    var random = SeededGenerator(seed: seed)
    for index in 0..<runs {
      let runSeed = random.next()
      do {
        try await runOnce(seed: runSeed, into: &report)
      } catch {
        report.failures.append("run \(index) (seed \(runSeed)): making the source threw \(error)")
      }
      report.runs += 1
      if stopsAtFirstFailingRun && !report.failures.isEmpty { break }
    }
    return report
  }

  private func runOnce(seed: UInt64, into report: inout ConformanceReport) async throws {
    let run = try await makeRun()
    let source = run.source
    var random = SeededGenerator(seed: seed)
    func fail(_ message: String) { report.failures.append("seed \(seed): \(message)") }
    // Once a wait for the source's snapshot times out, the run's later waits for it are skipped (`nil`),
    // and so are the checks that depend on them: the source has not reached a state it promised, and every
    // later such check would wait for it too, or report what the first failure already says. The wait for
    // the held version (G13) asks something else of the subscription, and always runs.
    var timedOut = false
    func within(skippable: Bool = true, _ operation: @escaping @Sendable () async -> Void) async -> Bool? {
      if timedOut && skippable { return nil }
      let finished = await Self.finishes(within: timeoutSeconds, operation)
      if !finished {
        timedOut = true
        fail("a wait timed out after \(timeoutSeconds) s; the run's later waits for the snapshot are skipped")
      }
      return finished
    }

    let steadySubscription = await source.subscribe()
    let steady = await BatchRecorder(
      steadySubscription, refreshStyle: Bool.random(using: &random) ? .reload : .reconfigure)
    let stalled = await BatchRecorder(await source.subscribe(), paused: true)
    let cancelled = await BatchRecorder(await source.subscribe())
    let writerSeeds = (0..<writers).map { _ in random.next() }

    await write(run, seeds: writerSeeds, half: 0)
    await cancelled.cancel()
    let late = await BatchRecorder(await source.subscribe())
    await write(run, seeds: writerSeeds, half: 1)

    await source.settled()
    let final = await source.snapshot
    let finalVersion = await source.version
    if let expected = await run.expected?(), !Self.same(final, expected) {
      fail("G10: after settled() the source shows \(final) where its driver gives \(expected)")
    }
    if await within({ await cancelled.finished() }) == false {
      fail("G7: a cancelled subscription's stream did not end")
    }
    for (name, recorder) in [("steady", steady), ("late", late)] {
      // showing(_:) also returns when a stream ends early: what is shown is checked after it.
      guard let reached = await within({ await recorder.showing(final) }) else { continue }
      let shows = await recorder.view.shows(final.sections)
      if !reached || !shows {
        fail("G2/G10: the \(name) subscriber did not reach the source's snapshot after settled()")
      }
    }
    await stalled.resume()
    if let stalledReached = await within({ await stalled.showing(final) }) {
      let stalledShows = await stalled.view.shows(final.sections)
      if !stalledReached || !stalledShows {
        fail("G6: the stalled subscriber did not reach the source's snapshot once it read again")
      }
      let stalledBatches = await stalled.batches.count
      if stalledBatches > 1 {
        fail("G6: the stalled subscriber got \(stalledBatches) batches, not one composed batch")
      }
    }
    // The steady consumer took every batch: it holds the source's version, also when the last
    // mutations made no batch.
    if steadySubscription.counter != finalVersion.counter {
      fail(
        "the source's version is of \(finalVersion.counter), its subscriptions of \(steadySubscription.counter)"
      )
    }
    let finalNumber = finalVersion.number
    if let reached = await within(
      skippable: false, { _ = try? await steadySubscription.reached(finalVersion) }),
      !reached || steadySubscription.heldVersion.number < finalNumber
    {
      fail("G13: the steady subscription holds version \(steadySubscription.heldVersion), not \(finalNumber)")
    }
    // Nothing was mutated since settled(): a version made since was still on its way when it returned.
    let versionNow = await source.version
    if versionNow != finalVersion {
      fail(
        "G10: the source's version moved from \(finalVersion) to \(versionNow) after settled() returned, "
          + "with no mutation since: settled() returned before what was asked of the source was offered")
    }
    if let subscriberCount {
      let count = await subscriberCount(source)
      if count != 3 { fail("G7: \(count) live subscriptions where 3 remain (one was cancelled)") }
    }
    for (name, recorder) in [
      ("steady", steady), ("stalled", stalled), ("cancelled", cancelled), ("late", late),
    ] {
      for violation in await recorder.violations { fail("\(name) subscriber: \(violation)") }
      report.batches += await recorder.batches.count
    }
    for recorder in [steady, stalled, late] { await recorder.cancel() }
  }

  /// Whether two snapshots show the same: section ids in order, equal section contents, equal items.
  /// - Complexity: O(*n*).
  static func same(_ lhs: Snapshot<Section>, _ rhs: Snapshot<Section>) -> Bool {
    guard lhs.sectionCount == rhs.sectionCount else { return false }
    for (left, right) in zip(lhs.sections, rhs.sections) {
      guard left.id == right.id, left.isContentEqual(to: right), left.items == right.items else {
        return false
      }
    }
    return true
  }

  /// Half of every writer's mutations, all writers at once.
  private func write(_ run: Run, seeds: [UInt64], half: Int) async {
    let count = half == 0 ? mutationsPerWriter / 2 : mutationsPerWriter - mutationsPerWriter / 2
    let mutate = run.mutate
    await withTaskGroup(of: Void.self) { group in
      for seed in seeds {
        group.addTask {
          var random = SeededGenerator(seed: seed &+ UInt64(half))
          for _ in 0..<count { try? await mutate(&random) }
        }
      }
    }
  }

  /// Whether `operation` returns within `seconds`. A guard against a hang, not a wait: it returns as soon
  /// as the operation does. An operation that never returns is left behind.
  static func finishes(within seconds: Double, _ operation: @escaping @Sendable () async -> Void) async
    -> Bool
  {
    let answer = Locked<CheckedContinuation<Bool, Never>?>(nil)
    @Sendable func settle(_ value: Bool) {
      answer.withLock { continuation in
        defer { continuation = nil }
        return continuation
      }?.resume(returning: value)
    }
    return await withCheckedContinuation { continuation in
      answer.withLock { $0 = continuation }
      let timer = Task {
        // Cancelled means the operation finished first: a cancelled sleep throws, and settles nothing.
        do {
          try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
          settle(false)
        } catch {}
      }
      Task {
        await operation()
        settle(true)
        timer.cancel()
      }
    }
  }
}

/// What a ``DataSourceConformance`` run found.
public struct ConformanceReport: Sendable, CustomStringConvertible {
  /// The seed the check started from: pass it to ``DataSourceConformance/run(seed:)`` to replay.
  public let seed: UInt64
  /// How many runs were made.
  public internal(set) var runs = 0
  /// How many batches the subscribers received in all.
  public internal(set) var batches = 0
  /// Every broken promise, naming its guarantee and the seed of its run.
  public internal(set) var failures: [String] = []

  /// Whether every promise was kept.
  public var passed: Bool { failures.isEmpty }

  /// A summary, with the first failures.
  public var description: String {
    let summary = "\(runs) runs, \(batches) batches, \(failures.count) failures; replay with seed \(seed)"
    return ([summary] + failures.prefix(10)).joined(separator: "\n")
  }
}
