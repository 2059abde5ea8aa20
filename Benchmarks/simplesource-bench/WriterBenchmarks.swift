// Sustained writers: the cost per mutation against the list's size, and clients' edits beside the server's.

import Foundation
import SimpleSource

/// `count` items in sections of 1,000 (one section below that).
func benchSections(_ count: Int) -> [BenchSection] {
  let perSection = min(count, 1_000)
  return (0..<(count / perSection)).map { section in
    Section(id: section, items: (0..<perSection).map { Item(id: section * perSection + $0) })
  }
}

/// 100,000 `replaceItem` calls from 4 tasks with one subscriber that keeps up: milliseconds, batches the
/// subscriber took, and catch-ups that fell back to a full diff.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func sustainedReplaces(items count: Int) async -> (ms: Double, batches: Double, fullDiffs: Double) {
  let tasks = 4
  let perTask = 100_000 / tasks
  guard let source = try? BasicDataSource(sections: benchSections(count)) else { fatalError("invalid data") }
  let batches = await source.subscribe().batches
  let consumer = Task { () -> Int in
    var taken = 0
    for await _ in batches { taken += 1 }
    return taken
  }
  let start = ContinuousClock.now
  await withTaskGroup(of: Void.self) { group in
    for task in 0..<tasks {
      group.addTask {
        for index in 0..<perTask {
          let id = (task * 7_919 + index * 31) % count
          _ = try? await source.replaceItem(Item(id: id, version: task * perTask + index + 1))
        }
      }
    }
  }
  await source.settled()
  let ms = elapsedMS(since: start)
  consumer.cancel()
  let taken = await consumer.value
  return (ms, Double(taken), Double(source.fullDiffCatchUps))
}

/// The least an actor can do for the writers of `sustainedReplaces`: it only yields each mutation to a
/// stream whose one consumer takes it (no list, no version, no batch).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
actor YieldingFloor {
  let continuation: AsyncStream<Item<Int>>.Continuation

  init(_ continuation: AsyncStream<Item<Int>>.Continuation) { self.continuation = continuation }

  func replace(_ item: Item<Int>) { continuation.yield(item) }

  /// 100,000 mutations from 4 tasks, as `sustainedReplaces` makes them, until the consumer took them all.
  static func measure() async -> Double {
    let (stream, continuation) = AsyncStream.makeStream(of: Item<Int>.self)
    let floor = YieldingFloor(continuation)
    let consumer = Task { () -> Int in
      var taken = 0
      for await _ in stream { taken += 1 }
      return taken
    }
    let tasks = 4
    let perTask = 100_000 / tasks
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask {
          for index in 0..<perTask {
            await floor.replace(Item(id: (task * 7_919 + index * 31) % 100_000, version: index + 1))
          }
        }
      }
    }
    continuation.finish()
    guard await consumer.value == 100_000 else { fatalError("the floor's consumer lost a mutation") }
    return elapsedMS(since: start)
  }
}

/// `throughput-100k-items`: sustained writes on 100,000 items against the same on 1,000 (`vs_1k`) and
/// against an actor that only yields each mutation to its consumer (`vs_floor`), in one run.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func sustainedThroughput(iterations: Int) async -> RuntimeResult {
  var large: [Double] = []
  var small: [Double] = []
  var floors: [Double] = []
  var batches: [Double] = []
  var fullDiffs: [Double] = []
  for _ in 0..<iterations {
    let baseline = await sustainedReplaces(items: 1_000)
    let measured = await sustainedReplaces(items: 100_000)
    floors.append(await YieldingFloor.measure())
    small.append(baseline.ms)
    large.append(measured.ms)
    batches.append(measured.batches)
    fullDiffs.append(measured.fullDiffs + baseline.fullDiffs)
  }
  let ms = median(large)
  let floor = median(floors)
  return RuntimeResult(
    name: "throughput-100k-items", ms: ms, floorMS: floor,
    extra: [
      "vs_1k": ms / median(small), "vs_floor": ms / floor, "ms_1k": median(small), "batches": median(batches),
      "full_diffs": fullDiffs.max() ?? 0,
    ],
    note:
      "100,000 replaceItem calls from 4 tasks on 100,000 items; vs_1k: the same on 1,000 items; floor: an actor that only yields each mutation"
  )
}

/// The arguments of the named edit `named-edits` measures: an item and its new version.
struct SetVersion: Codable, Sendable {
  var id: Int
  var version: Int
}

/// The named edit `named-edits` measures: the same write as `client-edits`' replace, run by name.
let setVersion = NamedEdit<BenchSection, SetVersion>("setVersion") { arguments, transaction in
  try transaction.replaceItem(Item(id: arguments.id, version: arguments.version))
}

/// `client-edits`: 8 clients make 5,000 edits through a `WireService` whose writer groups them, while 2
/// server tasks make 1,000 direct writes; against the same 6,000 writes made as direct transactions.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func clientEdits(iterations: Int) async -> RuntimeResult {
  await clientEdits(
    name: "client-edits", iterations: iterations, named: NamedEdits(),
    operation: { .replace(Item(id: $0, version: $1)) },
    note:
      "8 clients' 5,000 edits through a WireService beside 2 tasks' 1,000 direct writes; floor: 6,000 direct")
}

/// `named-edits`: `client-edits` with each client's edit a named edit (its name and typed arguments, run
/// by the service's own body in the group's transaction).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func namedEdits(iterations: Int) async -> RuntimeResult {
  await clientEdits(
    name: "named-edits", iterations: iterations, named: NamedEdits([setVersion]),
    operation: { setVersion(SetVersion(id: $0, version: $1)) },
    note:
      "8 clients' 5,000 named edits through a WireService beside 2 tasks' 1,000 direct writes; floor: 6,000 direct"
  )
}

/// 8 clients' 5,000 edits (`operation` of an item id and a version) through a `WireService` beside 2
/// server tasks' 1,000 direct writes, against the same 6,000 writes made as direct transactions.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func clientEdits(
  name: String, iterations: Int, named: NamedEdits<BenchSection>,
  operation: @escaping @Sendable (Int, Int) -> WireOperation<BenchSection>, note: String
) async -> RuntimeResult {
  let clients = 8
  let editsPerClient = 625
  let serverTasks = 2
  let writesPerServerTask = 500
  let count = 10_000
  var ourTimes: [Double] = []
  var directTimes: [Double] = []
  var ourBatches: [Double] = []
  var refusedCounts: [Double] = []

  func counting(_ source: BasicDataSource<BenchSection>) async -> Task<Int, Never> {
    let batches = await source.subscribe().batches
    return Task {
      var taken = 0
      for await _ in batches { taken += 1 }
      return taken
    }
  }

  func serverWrites(_ source: BasicDataSource<BenchSection>, into group: inout TaskGroup<Void>) {
    for task in 0..<serverTasks {
      group.addTask {
        for index in 0..<writesPerServerTask {
          let id = 5_000 + (task * 2_003 + index * 17) % 5_000
          _ = try? await source.replaceItem(Item(id: id, version: index + 1))
        }
      }
    }
  }

  // The counting clients tell a refusal from a confirmation: checked here, so that `refused` cannot read 0
  // by a needle that matches nothing.
  let coder = WireCoder()
  precondition(
    contains(
      coder.encode(WireMessage<BenchSection>.refused(edit: "c0-1", error: WireError(.invalidEdit, "x"))),
      refusal)
      && !contains(coder.encode(WireMessage<BenchSection>.confirmed(edit: "c0-1", version: 1)), refusal))

  // The baseline: every write a direct transaction. Its time and the batches a subscriber took.
  func directRound() async -> (ms: Double, batches: Double) {
    guard let plain = try? BasicDataSource(sections: benchSections(count)) else { fatalError("invalid data") }
    let counter = await counting(plain)
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for client in 0..<clients {
        group.addTask {
          for index in 0..<editsPerClient {
            let id = (client * 611 + index * 7) % 5_000
            _ = try? await plain.transaction { transaction in
              try transaction.replaceItem(Item(id: id, version: index + 1))
            }
          }
        }
      }
      serverWrites(plain, into: &group)
    }
    await plain.settled()
    let ms = elapsedMS(since: start)
    counter.cancel()
    return (ms, Double(await counter.value))
  }

  // Ours: the clients' edits through the service, beside the server's direct writes; also the refusals.
  func serviceRound() async -> (ms: Double, batches: Double, refused: Double) {
    guard let source = try? BasicDataSource(sections: benchSections(count)) else {
      fatalError("invalid data")
    }
    let service = WireService(source: source, stream: "bench", edits: .transactions(on: source, named: named))
    let refused = Locked(0)
    let sessions = (0..<clients).map { _ in
      service.session(scope: NoScope()) { data in
        // A client that only counts: an answer is confirmed or refused.
        if contains(data, refusal) { refused.withLock { $0 += 1 } }
      }
    }
    let counter = await counting(source)
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for (client, session) in sessions.enumerated() {
        group.addTask {
          for index in 0..<editsPerClient {
            let id = (client * 611 + index * 7) % 5_000
            await session.receive(
              .edit(
                WireEdit(id: "c\(client)-\(index)", operations: [operation(id, index + 1)]))
            )
          }
        }
      }
      serverWrites(source, into: &group)
    }
    await source.settled()
    let ms = elapsedMS(since: start)
    counter.cancel()
    let batches = Double(await counter.value)
    for session in sessions { await session.close() }
    return (ms, batches, Double(refused.withLock { $0 }))
  }

  // Each round runs both, the first of them alternating, so that neither always runs on the heap and caches
  // the other left; the ratios are the median of each round's own, which a slow stretch of the machine moves
  // on both sides of.
  var ratios: [Double] = []
  var batchRatios: [Double] = []
  for round in 0..<iterations {
    let direct: (ms: Double, batches: Double)
    let ours: (ms: Double, batches: Double, refused: Double)
    if round.isMultiple(of: 2) {
      direct = await directRound()
      ours = await serviceRound()
    } else {
      ours = await serviceRound()
      direct = await directRound()
    }
    ourTimes.append(ours.ms)
    directTimes.append(direct.ms)
    ourBatches.append(ours.batches)
    refusedCounts.append(ours.refused)
    ratios.append(ours.ms / direct.ms)
    batchRatios.append(ours.batches / max(1, direct.batches))
  }
  return RuntimeResult(
    name: name, ms: median(ourTimes), floorMS: median(directTimes),
    extra: [
      "vs_direct": median(ratios), "batches": median(ourBatches), "batches_vs_direct": median(batchRatios),
      "refused": refusedCounts.max() ?? 0,
    ],
    note: note)
}

/// The bytes a refused answer carries, and no confirmed one.
private let refusal = Array(#""type":"refused""#.utf8)

/// Whether `data` holds `needle`, by a scan of its bytes: the counting clients of `client-edits` must cost
/// little beside the service they measure (`Data.range(of:)` costs a tenth of a direct write per answer).
private func contains(_ data: Data, _ needle: [UInt8]) -> Bool {
  data.withUnsafeBytes { bytes in
    guard let first = needle.first, bytes.count >= needle.count else { return false }
    for start in 0...(bytes.count - needle.count) where bytes[start] == first {
      if needle.indices.allSatisfy({ bytes[start + $0] == needle[$0] }) { return true }
    }
    return false
  }
}
