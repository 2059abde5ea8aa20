// Runtime benchmarks: throughput, fan-out, a stalled subscriber's memory, latency; each against a floor.

import Foundation
import Synchronization
import SimpleSource

struct RuntimeResult {
  var name: String
  var ms: Double
  var floorMS: Double
  var extra: [String: Double] = [:]
  var note: String = ""
  var vsFloor: Double { ms / floorMS }
}

typealias BenchSection = Section<Int, Item<Int>>

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func elapsedMS(since start: ContinuousClock.Instant) -> Double {
  milliseconds(ContinuousClock.now - start)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Resumes one waiter once `count` arrivals have been counted.
final class Countdown: Sendable {
  private let state: Locked<(remaining: Int, waiter: CheckedContinuation<Void, Never>?)>
  init(_ count: Int) { state = Locked((count, nil)) }
  func arrive() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.remaining -= 1
      guard state.remaining == 0 else { return nil }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }
  func wait() async {
    await withCheckedContinuation { continuation in
      let done = state.withLock { state -> Bool in
        if state.remaining <= 0 { return true }
        state.waiter = continuation
        return false
      }
      if done { continuation.resume() }
    }
  }
}

actor BareAppender {
  var values: [Int] = []
  func append(_ value: Int) { values.append(value) }
}

func tenThousandItems() -> [BenchSection] {
  (0..<10).map { section in Section(id: section, items: (0..<1_000).map { Item(id: section * 1_000 + $0) }) }
}

// MARK: - Throughput

/// 100,000 single-item mutations from 8 tasks on a 10,000-item source with 10 subscribers, against 8
/// tasks appending 100,000 integers to a bare actor.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func throughput(iterations: Int) async -> RuntimeResult {
  let tasks = 8
  let perTask = 100_000 / tasks
  var ours: [Double] = []
  var floors: [Double] = []
  var batchCounts: [Double] = []
  var fullDiffs: [Double] = []
  for _ in 0..<iterations {
    let bare = BareAppender()
    var start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask { for index in 0..<perTask { await bare.append(task * perTask + index) } }
      }
    }
    floors.append(elapsedMS(since: start))

    guard let source = try? BasicDataSource(sections: tenThousandItems()) else { fatalError("invalid data") }
    let counted = Locked(0)
    var consumers: [Task<Void, Never>] = []
    for _ in 0..<10 {
      let batches = await source.subscribe().batches
      consumers.append(Task { for await _ in batches { counted.withLock { $0 += 1 } } })
    }
    start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask {
          // Each task appends its own items and replaces existing ones: half and half.
          for index in 0..<perTask {
            let id = 100_000 + task * perTask + index
            if index % 2 == 0 {
              _ = try? await source.appendItems([Item(id: id)], toSection: (task + index) % 10)
            } else {
              _ = try? await source.replaceItem(Item(id: (task * 1_249 + index * 7) % 10_000, version: index))
            }
          }
        }
      }
    }
    await source.settled()
    ours.append(elapsedMS(since: start))
    for consumer in consumers { consumer.cancel() }
    for consumer in consumers { await consumer.value }
    batchCounts.append(Double(counted.withLock { $0 }) / 10)
    fullDiffs.append(Double(source.fullDiffCatchUps))
  }
  return RuntimeResult(
    name: "throughput", ms: median(ours), floorMS: median(floors),
    extra: [
      "batches_per_subscriber": median(batchCounts), "mutations": 100_000, "full_diffs": fullDiffs.max() ?? 0,
    ],
    note: "batches per subscriber: \(Int(median(batchCounts))) for 100,000 mutations")
}

// MARK: - Fan-out

/// One batch delivered to `count` waiting subscribers, against `count` bare AsyncStream yields of a
/// shared reference to waiting consumers.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func fanout(_ count: Int, iterations: Int) async -> RuntimeResult {
  final class Payload: Sendable {}
  var ours: [Double] = []
  var floors: [Double] = []

  // Floor.
  let payload = Payload()
  var continuations: [AsyncStream<Payload>.Continuation] = []
  var rounds: [Countdown] = []
  let roundsLock = Locked([Countdown]())
  var floorConsumers: [Task<Void, Never>] = []
  for _ in 0..<count {
    let (stream, continuation) = AsyncStream.makeStream(of: Payload.self)
    continuations.append(continuation)
    floorConsumers.append(
      Task {
        var round = 0
        for await _ in stream {
          roundsLock.withLock { $0[round] }.arrive()
          round += 1
        }
      })
  }
  for _ in 0..<(iterations + 1) { rounds.append(Countdown(count)) }
  roundsLock.withLock { $0 = rounds }
  for round in 0..<(iterations + 1) {
    let start = ContinuousClock.now
    for continuation in continuations { continuation.yield(payload) }
    await rounds[round].wait()
    if round > 0 { floors.append(elapsedMS(since: start)) }
  }
  for continuation in continuations { continuation.finish() }
  for consumer in floorConsumers { await consumer.value }

  // Ours.
  guard let source = try? BasicDataSource(sections: [BenchSection(id: 0, items: [Item(id: 0)])]) else {
    fatalError("invalid data")
  }
  var ourRounds: [Countdown] = []
  for _ in 0..<(iterations + 1) { ourRounds.append(Countdown(count)) }
  let ourRoundsLock = Locked(ourRounds)
  var consumers: [Task<Void, Never>] = []
  for _ in 0..<count {
    let batches = await source.subscribe().batches
    consumers.append(
      Task {
        var round = 0
        for await _ in batches {
          ourRoundsLock.withLock { $0[round] }.arrive()
          round += 1
        }
      })
  }
  for round in 0..<(iterations + 1) {
    let start = ContinuousClock.now
    _ = try? await source.replaceItem(Item(id: 0, version: round + 1))
    await ourRounds[round].wait()
    if round > 0 { ours.append(elapsedMS(since: start)) }
  }
  for consumer in consumers { consumer.cancel() }
  for consumer in consumers { await consumer.value }
  return RuntimeResult(name: "fanout-\(count)", ms: median(ours), floorMS: median(floors))
}

/// One batch to `count` subscribers parked with a synchronous sink (the wire service's transport: the
/// publisher writes to each sink, no task wakes), against one subscriber whose task hands the same batch
/// to the same `count` sinks in a loop (a broadcast of its own, which the package no longer keeps). Each
/// sink counts the batches it took; the round ends when every sink took it.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func fanoutSinks(_ count: Int, iterations: Int) async -> RuntimeResult {
  final class Arrivals: Sendable {
    let taken = Atomic<Int>(0)
    let round: Locked<(target: Int, waiter: CheckedContinuation<Void, Never>?)> = Locked((.max, nil))
    func take() {
      let now = taken.add(1, ordering: .acquiringAndReleasing).newValue
      guard now == round.withLock(\.target) else { return }
      round.withLock { round in
        defer { round.waiter = nil }
        return round.waiter
      }?.resume()
    }
    /// Returns once `target` batches were taken in all.
    func reached(_ target: Int) async {
      await withCheckedContinuation { continuation in
        let done = round.withLock { round in
          round.target = target
          if taken.load(ordering: .acquiring) >= target { return true }
          round.waiter = continuation
          return false
        }
        if done { continuation.resume() }
      }
    }
  }
  func source() -> BasicDataSource<BenchSection> {
    guard let source = try? BasicDataSource(sections: [BenchSection(id: 0, items: [Item(id: 0)])]) else {
      fatalError("invalid data")
    }
    return source
  }
  var ours: [Double] = []
  var floors: [Double] = []

  // Floor: one subscriber's task loops over the sinks.
  do {
    let source = source()
    let arrivals = Arrivals()
    let sinks: [@Sendable (UpdateBatch<BenchSection>) -> Bool] = (0..<count).map { _ in
      { _ in
        arrivals.take()
        return true
      }
    }
    let batches = await source.subscribe().batches
    let loop = Task {
      for await batch in batches { for sink in sinks { _ = sink(batch) } }
    }
    for round in 0..<(iterations + 1) {
      let start = ContinuousClock.now
      _ = try? await source.replaceItem(Item(id: 0, version: round + 1))
      await arrivals.reached(count * (round + 1))
      if round > 0 { floors.append(elapsedMS(since: start)) }
    }
    loop.cancel()
    await loop.value
  }

  // Ours: every subscriber parked with its sink.
  do {
    let source = source()
    let arrivals = Arrivals()
    var subscriptions: [Subscription<BenchSection>] = []
    var consumers: [Task<Void, Never>] = []
    let parked = Arrivals()
    for _ in 0..<count {
      let subscription = await source.subscribe()
      subscriptions.append(subscription)
      consumers.append(
        Task {
          // As a session's sender follows: parked with its sink, woken only for what the sink refused.
          await subscription.follow(
            sinkingInto: { _ in
              arrivals.take()
              return true
            },
            parked: { parked.take() }
          ) { _ in true }
        })
    }
    await parked.reached(count)
    for round in 0..<(iterations + 1) {
      let start = ContinuousClock.now
      _ = try? await source.replaceItem(Item(id: 0, version: round + 1))
      await arrivals.reached(count * (round + 1))
      if round > 0 { ours.append(elapsedMS(since: start)) }
    }
    for subscription in subscriptions { subscription.cancel() }
    for consumer in consumers { await consumer.value }
  }
  return RuntimeResult(name: "fanout-sinks-\(count)", ms: median(ours), floorMS: median(floors))
}

// MARK: - Stalled subscriber

func residentBytes() -> Double {
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return .nan }
  let fields = text.split(separator: " ")
  return fields.count > 1 ? (Double(fields[1]) ?? .nan) * 4_096 : .nan
}

/// Hands the allocator's free pages back to the system (glibc's `malloc_trim`, looked up at run time), so
/// that a resident-memory difference counts what was allocated since, not pages that earlier cases freed
/// and the allocator reused: without it, `resident-1m` run after the other cases printed 0 MB.
func returnFreePages() {
  #if canImport(Glibc)
    typealias Trim = @convention(c) (Int) -> Int32
    if let trim = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(trim, to: Trim.self)(0) }
  #endif
}

/// Resident memory after ``returnFreePages()``: what the process holds, not what earlier cases left free.
func trimmedResidentBytes() -> Double {
  returnFreePages()
  return residentBytes()
}

/// One subscriber never consumes while 1,000,000 mutations run: resident memory at 10k, 500k and 1M,
/// after 10,000 warm-up mutations that let the allocator reach its steady state. Run twice: first with
/// ``HistoryLimit/newest``, which isolates what the stalled subscriber and the source hold (`newest_bytes_*`),
/// then with the default history, which also retains up to 64 MiB (estimated) of past versions for
/// subscribers that resume (`bytes_*`, and `ms`).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func stalled() async -> RuntimeResult {
  let newest = await stalledRun(history: .newest)
  let retained = await stalledRun(history: .default)
  return RuntimeResult(
    name: "stalled", ms: retained.ms, floorMS: .nan,
    extra: [
      "bytes_10k": retained.at10k, "bytes_500k": retained.at500k, "bytes_1m": retained.at1m,
      "newest_bytes_10k": newest.at10k, "newest_bytes_500k": newest.at500k, "newest_bytes_1m": newest.at1m,
    ],
    note: String(
      format:
        "resident %.1f MB at 10k, %.1f MB at 500k, %.1f MB at 1M mutations (history .newest: %.1f, %.1f, %.1f MB)",
      retained.at10k / 1e6, retained.at500k / 1e6, retained.at1m / 1e6, newest.at10k / 1e6,
      newest.at500k / 1e6,
      newest.at1m / 1e6))
}

/// 1,000,000 replacements on a 10,000-item source with one subscriber that never consumes: the time they
/// take and resident memory after 10k, 500k and 1M of them, free pages handed back first (`--quick`:
/// 100,000, measured after 10k, 50k and 100k).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func stalledRun(history: HistoryLimit) async -> (ms: Double, at10k: Double, at500k: Double, at1m: Double) {
  guard let source = try? BasicDataSource(sections: tenThousandItems(), history: history) else {
    fatalError("invalid data")
  }
  let subscription = await source.subscribe()
  let warmUp = 10_000
  for index in 0..<warmUp { _ = try? await source.replaceItem(Item(id: index % 10_000, version: index)) }
  await source.settled()
  let start = ContinuousClock.now
  var at10k = 0.0
  var at500k = 0.0
  let mutations = sized(1_000_000, quick: 100_000)
  for index in warmUp..<(warmUp + mutations) {
    _ = try? await source.replaceItem(Item(id: index % 10_000, version: index))
    if index == warmUp + 9_999 {
      await source.settled()
      at10k = trimmedResidentBytes()
    } else if index == warmUp + mutations / 2 - 1 {
      await source.settled()
      at500k = trimmedResidentBytes()
    }
  }
  await source.settled()
  let at1m = trimmedResidentBytes()
  let ms = elapsedMS(since: start)
  withExtendedLifetime(subscription) {}
  return (ms, at10k, at500k, at1m)
}

// MARK: - Latency

actor BareHop {
  let continuation: AsyncStream<Int>.Continuation
  init(_ continuation: AsyncStream<Int>.Continuation) { self.continuation = continuation }
  func send(_ value: Int) { continuation.yield(value) }
}

/// Mutation to delivery on an idle source, against an actor method yielding into a stream.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func latency(iterations: Int) async -> RuntimeResult {
  let rounds = max(200, iterations * 20)
  let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
  let hop = BareHop(continuation)
  var iterator = stream.makeAsyncIterator()
  var floors: [Double] = []
  for round in 0..<rounds {
    let start = ContinuousClock.now
    await hop.send(round)
    _ = await iterator.next()
    floors.append(elapsedMS(since: start))
  }
  guard let source = try? BasicDataSource(sections: [BenchSection(id: 0, items: [Item(id: 0)])]) else {
    fatalError("invalid data")
  }
  var batches = await source.subscribe().batches.makeAsyncIterator()
  var ours: [Double] = []
  for round in 0..<rounds {
    let start = ContinuousClock.now
    _ = try? await source.replaceItem(Item(id: 0, version: round + 1))
    _ = await batches.next()
    ours.append(elapsedMS(since: start))
  }
  return RuntimeResult(name: "latency", ms: median(ours), floorMS: median(floors))
}

let runtimeCaseNames =
  [
    "throughput", "fanout-1", "fanout-10", "fanout-100", "fanout-1000", "fanout-sinks-1000", "stalled",
    "latency", "view-apply",
    "view-rebased", "view-apply-verified", "projection-one-edit-100k", "projection-one-edit-1m",
    "projection-refilter-100k",
    "composite-one-edit", "outline-one-edit-100k", "outline-from-rows-one-edit", "queries-1000-clients",
    "observed-one-edit-1m",
    "observed-invalidations", "observed-window-1m", "throughput-100k-items", "client-edits", "named-edits",
    "client-edit-races", "schedule-overhead", "scope-variants", "unsubscribe-100k",
  ] + editCaseNames + replicaCaseNames + copyCaseNames + historyCaseNames

/// The case `name`, first, and any case measured in the same rounds with it.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func runRuntimeCase(named name: String, iterations: Int) async -> [RuntimeResult] {
  switch name {
  case "throughput": [await throughput(iterations: max(3, iterations / 3))]
  case "stalled": [await stalled()]
  case "throughput-100k-items": [await sustainedThroughput(iterations: max(1, iterations / 3))]
  case "client-edits": [await clientEdits(iterations: iterations)]
  case "named-edits": [await namedEdits(iterations: iterations)]
  case "client-edit-races": [await clientEditRaces()]
  case "schedule-overhead":
    if #available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *) {
      [await scheduleOverhead(iterations: iterations)]
    } else {
      []
    }
  case "latency": [await latency(iterations: iterations)]
  case "view-apply": [await viewBatch(iterations: iterations, rebased: false)]
  case "view-rebased": [await viewBatch(iterations: iterations, rebased: true)]
  case "view-apply-verified": [await viewBatchVerified(iterations: iterations)]
  case "projection-one-edit-100k": [await projectionOneEdit(iterations: iterations)]
  case "projection-one-edit-1m": [await projectionOneEditMillion(iterations: iterations)]
  case "projection-refilter-100k": [await projectionRefilter(iterations: iterations)]
  case "composite-one-edit": [await compositeOneEdit(iterations: iterations)]
  case "outline-one-edit-100k": [await outlineOneEdit(iterations: iterations)]
  case "outline-from-rows-one-edit": [await outlineFromRowsOneEdit(iterations: iterations)]
  case "copy-by-edits": [await copyByEdits(iterations: iterations)]
  case "copy-apply-array": [await copyApplyArray(iterations: iterations)]
  case "history-window": [await historyWindow(iterations: iterations)]
  case "observed-one-edit-1m", "observed-invalidations", "observed-window-1m":
    if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
      switch name {
      case "observed-one-edit-1m": [await observedOneEdit(iterations: iterations)]
      case "observed-window-1m": [await observedWindow(iterations: iterations)]
      default: [await observedInvalidations()]
      }
    } else {
      []
    }
  case "fanout-sinks-1000": [await fanoutSinks(1000, iterations: max(20, iterations * 4))]
  case "queries-1000-clients": [await queriesThousandClients(iterations: iterations)]
  case "scope-variants": [await scopeVariants(iterations: iterations)]
  case "unsubscribe-100k": [await unsubscribeMany(iterations: iterations)]
  case "replica-journal-one-edit": [await replicaJournalOneEdit(iterations: iterations)]
  case "replica-restart-100k": [await replicaRestart(iterations: iterations)]
  case "update-one-edit-1m", "set-sections-one-edit-1m":
    await wholeListOneEdit(first: name, iterations: iterations)
  case _ where editCaseNames.contains(name): [await runEditCase(named: name, iterations: iterations)]
  default: [await fanout(Int(name.dropFirst("fanout-".count)) ?? 1, iterations: max(20, iterations * 4))]
  }
}

/// `unsubscribe-100k`: 100,000 subscribers of one source cancelled one by one, against 10,000: `vs_10k` is
/// the time per cancellation at 100,000 over the same at 10,000, flat (about 1) when a cancellation costs
/// O(1) and about 10 when it searches every subscriber. `floor` is the 10,000.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func unsubscribeMany(iterations: Int) async -> RuntimeResult {
  /// The milliseconds per thousand cancellations of `count` subscribers, cancelled in the order they
  /// subscribed.
  func cancelling(_ count: Int) async -> Double {
    guard let source = try? BasicDataSource(sections: [BenchSection(id: 0, items: [Item(id: 0)])]) else {
      fatalError("invalid data")
    }
    var subscriptions: [Subscription<BenchSection>] = []
    subscriptions.reserveCapacity(count)
    for _ in 0..<count { subscriptions.append(await source.subscribe()) }
    let start = ContinuousClock.now
    for subscription in subscriptions { subscription.cancel() }
    return elapsedMS(since: start) * 1_000 / Double(count)
  }
  var small: [Double] = []
  var large: [Double] = []
  for _ in 0..<max(3, iterations / 3) {
    small.append(await cancelling(10_000))
    large.append(await cancelling(sized(100_000, quick: 20_000)))
  }
  let (smallMS, largeMS) = (median(small), median(large))
  return RuntimeResult(
    name: "unsubscribe-100k", ms: largeMS, floorMS: smallMS, extra: ["vs_10k": largeMS / smallMS],
    note: String(
      format: "ms per 1,000 cancellations: %.3f of 100,000 subscribers, %.3f of 10,000", largeMS, smallMS))
}
