// Replica benchmarks: journalling a batch in a remote source's file store, and starting from the store.

import Foundation
import SimpleSource

let replicaCaseNames = ["replica-journal-one-edit", "replica-restart-100k"]

/// A folder under the temporary directory, removed by `remove()`.
private func replicaFolder() -> URL {
  FileManager.default.temporaryDirectory.appendingPathComponent("simplesource-bench-\(UUID().uuidString)")
}

private func items(_ count: Int) -> [BenchSection] {
  let perSection = count / 10
  return (0..<10).map { section in
    Section(id: section, items: (0..<perSection).map { Item(id: section * perSection + $0) })
  }
}

/// `count` wire batches of one replaced item each, made by a source of `size` items, from version 0 on.
private func oneEditBatches(size: Int, count: Int) async -> (
  Snapshot<BenchSection>, [WireBatch<BenchSection>]
) {
  guard let source = try? BasicDataSource(sections: items(size), coalescing: .immediate) else {
    fatalError("invalid data")
  }
  let subscription = await source.subscribe()
  var batches = subscription.batches.makeAsyncIterator()
  var made: [WireBatch<BenchSection>] = []
  for round in 0..<count {
    _ = try? await source.replaceItem(Item(id: (round * 7_919) % size, version: round + 1))
    guard let batch = await batches.next() else { fatalError("the source ended") }
    made.append(WireBatch(batch))
  }
  subscription.cancel()
  return (subscription.snapshot, made)
}

/// The median time of receiving one journalled batch, for a replica of `size` items in a file store.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
private func journalOneEdit(size: Int, iterations: Int) async -> Double {
  let (start, batches) = await oneEditBatches(size: size, count: iterations)
  let folder = replicaFolder()
  defer { try? FileManager.default.removeItem(at: folder) }
  let remote = RemoteDataSource<BenchSection>(store: FileReplicaStore(directory: folder, sync: .compactions))
  try? await remote.receive(.reset(stream: "bench", version: 0, snapshot: start))
  var times: [Double] = []
  for batch in batches {
    let begin = ContinuousClock.now
    do { try await remote.receive(.batch(batch)) } catch { fatalError("a batch was refused: \(error)") }
    times.append(elapsedMS(since: begin))
  }
  if await remote.storeError != nil { fatalError("the store failed") }
  return median(times)
}

/// `replica-journal-one-edit`: a remote source with a file store receiving one batch of one replaced item
/// at 1,000,000 items, over the same at 10,000 (`vs_10k`; the journal appends what the batch changed).
/// Appends are not flushed (`Sync.compactions`), so the figure is the journal's own work, not the disk's.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func replicaJournalOneEdit(iterations: Int) async -> RuntimeResult {
  let rounds = max(20, iterations * 4)
  let small = await journalOneEdit(size: 10_000, iterations: rounds)
  let large = await journalOneEdit(size: sized(1_000_000, quick: 100_000), iterations: rounds)
  return RuntimeResult(
    name: "replica-journal-one-edit", ms: large, floorMS: .nan,
    extra: ["vs_10k": large / small, "ms_10k": small],
    note: String(format: "10k %.3f ms; 1m/10k %.2fx", small, large / small))
}

/// `replica-restart-100k`: starting a remote source of 100,000 items from its file store, over a reset
/// over the wire from an in-process service (`vs_reset`: the service encodes the state, the source
/// decodes and shows it), and the store's size on disk (`store_bytes`).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func replicaRestart(iterations: Int) async -> RuntimeResult {
  guard let source = try? BasicDataSource(sections: items(100_000)) else { fatalError("invalid data") }
  let service = WireService(source: source, stream: "bench")
  let folder = replicaFolder()
  defer { try? FileManager.default.removeItem(at: folder) }
  let first = RemoteDataSource<BenchSection>(store: FileReplicaStore(directory: folder))
  var resets: [Double] = []
  var restarts: [Double] = []
  for round in 0..<max(3, iterations / 2) {
    let sent = Locked<[Data]>([])
    let begin = ContinuousClock.now
    let remote = round == 0 ? first : RemoteDataSource<BenchSection>()
    let session = service.session { data in sent.withLock { $0.append(data) } }
    await session.receive(WireCoder().encode(await remote.subscribeRequest))
    await session.settled()
    for data in sent.withLock({ $0 }) {
      do { try await remote.receive(data) } catch { fatalError("the reset was refused: \(error)") }
    }
    if round > 0 { resets.append(elapsedMS(since: begin)) }
    await session.close()

    let restart = ContinuousClock.now
    let restarted = RemoteDataSource<BenchSection>(store: FileReplicaStore(directory: folder))
    let count = await restarted.snapshot.itemCount
    restarts.append(elapsedMS(since: restart))
    guard count == 100_000, await restarted.storeError == nil else { fatalError("the store lost the state") }
  }
  let bytes = ["state", "journal"].reduce(0) { total, name in
    let path = folder.appendingPathComponent(name).path
    return total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
  }
  let (ms, reset) = (median(restarts), median(resets))
  return RuntimeResult(
    name: "replica-restart-100k", ms: ms, floorMS: .nan,
    extra: ["vs_reset": ms / reset, "reset_ms": reset, "store_bytes": Double(bytes)],
    note: String(
      format: "reset over the wire %.1f ms; store %.1f MB; store/reset %.2fx", reset, Double(bytes) / 1e6,
      ms / reset))
}
