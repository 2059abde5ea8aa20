// Live queries over the wire: the CPU of one edit delivered to 1,000 sessions over 100 distinct queries,
// against one session over one query, measured in the same run.

import Foundation
import SimpleSource

/// The process's CPU time (every thread), in milliseconds.
func processCPUms() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
  return Double(time.tv_sec) * 1_000 + Double(time.tv_nsec) / 1_000_000
}

/// A service over a flat 100,000-item source with `queries` distinct queries (`atLeast` k: the items whose
/// id is k or more, for k among the last 1,000 ids, so that every query shows the edited last item and
/// the 1,000 resets at the start stay small) and `clients` sessions spread over them, each a client that
/// only counts the messages it gets.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
final class QueryFanout: Sendable {
  let source: BasicDataSource<BenchSection>
  let sessions: [WireSession<BenchSection, NoScope>]
  let received = HeldVersion()
  let count = Locked(0)
  let items: Int

  init(items: Int, queries: Int, clients: Int) async {
    self.items = items
    guard let source = try? BasicDataSource(sections: flatItems(items)) else { fatalError("invalid data") }
    self.source = source
    let atLeast = WireQuery<BenchSection>("atLeast", parameters: ["k": .integer]) {
      arguments throws(WireQueryRefusal) in
      let k = try arguments.integer("k")
      return Projection(where: { $0.id >= k })
    }
    let service = WireService(source: source, stream: "bench", queries: [atLeast])
    var sessions: [WireSession<BenchSection, NoScope>] = []
    for client in 0..<clients {
      let session = service.session { [count, received] _ in
        received.hold(
          through: count.withLock { count in
            count += 1
            return count
          })
      }
      let query = WireQueryRequest("atLeast", ["k": .integer(items - 1_000 + (client % queries) * 10)])
      await session.receive(
        WireCoder().encode(WireMessage<BenchSection>.subscribe(stream: nil, from: nil, query: query)))
      sessions.append(session)
    }
    self.sessions = sessions
    _ = await received.reached(clients)  // every reset
  }

  /// The CPU milliseconds of one edit of the last item until every session has sent its batch. Then,
  /// untimed, every session settles (its task has asked for the next batch again), so that no session's
  /// work of this round lands in the next one measured.
  func edit(_ round: Int) async -> Double {
    let target = count.withLock { $0 } + sessions.count
    let start = processCPUms()
    _ = try? await source.replaceItem(Item(id: items - 1, version: round + 1))
    _ = await received.reached(target)
    let cpu = processCPUms() - start
    for session in sessions { await session.settled() }
    return cpu
  }

  func close() async { for session in sessions { await session.close() } }
}

/// `queries-1000-clients`: 1,000 sessions over 100 distinct queries of a 100,000-item source, one edit
/// delivered to all; `vs_one_query` is the CPU for all of them over one session's over one query, the
/// rounds of the two alternating.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func queriesThousandClients(iterations: Int) async -> RuntimeResult {
  let one = await QueryFanout(items: 100_000, queries: 1, clients: 1)
  let all = await QueryFanout(items: 100_000, queries: 100, clients: 1_000)
  var oneTimes: [Double] = []
  var allTimes: [Double] = []
  for round in 0..<max(10, iterations * 2) {
    oneTimes.append(await one.edit(round))
    allTimes.append(await all.edit(round))
  }
  await one.close()
  await all.close()
  let (oneMS, allMS) = (median(oneTimes), median(allTimes))
  return RuntimeResult(
    name: "queries-1000-clients", ms: allMS, floorMS: .nan,
    extra: ["vs_one_query": allMS / oneMS, "one_query_cpu_ms": oneMS],
    note: String(
      format: "CPU: one query, one client %.3f ms; 100 queries, 1,000 clients %.2f ms", oneMS, allMS))
}
