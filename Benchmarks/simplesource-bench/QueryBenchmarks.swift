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
///
/// Each session has a sink, as a WebSocket transport gives its sessions: the scope's publisher writes a
/// batch to every parked session's sink, and no session wakes a task of its own. So every round of one
/// client costs the same (a writer of the publisher started, then the sink); with `send` alone, one
/// client's edit cost 0.03 ms of CPU when a thread of the pool happened to be awake and 0.2-1.5 ms when
/// one had to wake, and the median of a run moved the ratio between 40 and 600.
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
    // The first message (a reset) goes through `send`, every batch through the sink: both count.
    let counted: @Sendable () -> Void = { [count, received] in
      let total = count.withLock { (count: inout Int) -> Int in
        count += 1
        return count
      }
      received.hold(through: total)
    }
    let sink: WireSink = { (_: WireFrame) -> Bool in
      counted()
      return true
    }
    for client in 0..<clients {
      let session = service.session(sink: sink) { _ in counted() }
      let query = WireQueryRequest("atLeast", ["k": .integer(items - 1_000 + (client % queries) * 10)])
      await session.receive(
        WireCoder().encode(WireMessage<BenchSection>.subscribe(stream: nil, from: nil, query: query)))
      sessions.append(session)
    }
    self.sessions = sessions
    _ = await received.reached(clients)  // every reset
  }

  /// The CPU milliseconds of one edit of the last item until every session has sent its batch
  /// (``timedEdit(_:item:round:count:received:sessions:)``).
  func edit(_ round: Int) async -> Double {
    await timedEdit(
      source, item: items - 1, round: round, count: count, received: received, sessions: sessions)
  }

  func close() async { for session in sessions { await session.close() } }
}

/// The CPU milliseconds of one edit of `item` in `source` until every one of `sessions` has sent its
/// message (`count`, held in `received`, counts them). Then, untimed, every session settles (its task has
/// asked for the next batch again), so that no session's work of this round lands in the next one.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func timedEdit<Scope: Hashable & Sendable>(
  _ source: BasicDataSource<BenchSection>, item: Int, round: Int, count: Locked<Int>, received: HeldVersion,
  sessions: [WireSession<BenchSection, Scope>]
) async -> Double {
  let target = count.withLock { $0 } + sessions.count
  let start = processCPUms()
  _ = try? await source.replaceItem(Item(id: item, version: round + 1))
  _ = await received.reached(target)
  let cpu = processCPUms() - start
  for session in sessions { await session.settled() }
  return cpu
}

/// `queries-1000-clients`: 1,000 sessions over 100 distinct queries of a 100,000-item source, one edit
/// delivered to all; `vs_one_query` is the CPU for all of them over one session's over one query, the
/// rounds of the two alternating. Every session writes through a sink (see ``QueryFanout``), which keeps
/// the one-session baseline still from run to run.
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

/// A search's parameters with its text lowercased: the search ignores case.
@Sendable func lowercasedText(_ parameters: [String: WireValue]) -> [String: WireValue] {
  guard case .string(let text)? = parameters["text"] else { return parameters }
  return ["text": .string(text.lowercased())]
}

/// A scoped service over a flat source: a control session of scope `alice` with one view, and, when
/// `spellings` is not zero, `attackers` sessions of scope `mallory` that each subscribe to `spellings`
/// case variants of one search that matches every item (`folded`: the query declares its canonical
/// form). Every client only counts its messages.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
final class VariantViews: Sendable {
  let source: BasicDataSource<BenchSection>
  let service: WireService<BenchSection, String>
  let sessions: [WireSession<BenchSection, String>]
  let received = HeldVersion()
  let count = Locked(0)
  let items: Int

  init(items: Int, attackers: Int, spellings: Int, folded: Bool) async {
    self.items = items
    guard let source = try? BasicDataSource(sections: flatItems(items)) else { fatalError("invalid data") }
    self.source = source
    let search = WireQuery<BenchSection>(
      "search", parameters: ["text": .string], canonical: folded ? lowercasedText : nil
    ) { _ throws(WireQueryRefusal) in Projection(where: { _ in true }) }
    // Within every count and rate: the budget per scope is what the folded form is measured against.
    let limits = WireLimits(viewsPerScope: .max, subscribes: nil, freshViews: nil)
    let service = WireService(
      source: source, stream: "bench", queries: [search], keepingIdleViews: 0, limits: limits
    ) {
      (_: String) in { _ in true }
    }
    self.service = service
    let (count, received) = (count, received)
    func counting(_ scope: String) -> WireSession<BenchSection, String> {
      service.session(scope: scope) { _ in
        received.hold(
          through: count.withLock { count in
            count += 1
            return count
          })
      }
    }
    let control = counting("alice")
    await control.receive(
      WireCoder().encode(
        WireMessage<BenchSection>.subscribe(
          stream: nil, from: nil, query: WireQueryRequest("search", ["text": .string("spec")]))))
    var sessions = [control]
    // The 16 case variants of "spec": s/S, p/P, e/E, c/C.
    let variants = (0..<spellings).map { mask in
      String(
        "spec".enumerated().map {
          mask & (1 << $0.offset) != 0 ? Character($0.element.uppercased()) : $0.element
        })
    }
    for _ in 0..<attackers where spellings > 0 {
      let session = counting("mallory")
      let views = Dictionary(
        uniqueKeysWithValues: variants.map {
          ($0, Optional(WireQueryRequest("search", ["text": .string($0)])))
        })
      await session.receive(WireCoder().encode(WireMessage<BenchSection>.subscribeViews(views)))
      sessions.append(session)
    }
    self.sessions = sessions
    _ = await received.reached(sessions.count)  // every reset
  }

  /// The CPU milliseconds of one edit of the last item until every session has sent its batch.
  func edit(_ round: Int) async -> Double {
    await timedEdit(
      source, item: items - 1, round: round, count: count, received: received, sessions: sessions)
  }

  var liveViews: Int { get async { await service.liveViewCount } }

  func close() async { for session in sessions { await session.close() } }
}

/// `scope-variants`: one scope's 64 sessions each subscribe to the 16 case variants of one search that
/// matches all 20,000 items, beside a control session of another scope; the CPU of one edit delivered to
/// every session, over the control's alone (`vs_control_raw`: the query declares no canonical form, so
/// every spelling is a view of its own; `vs_control_folded`: it does, so the 16 spellings are one view),
/// and the views the service holds each way. The rounds of the three alternate.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func scopeVariants(iterations: Int) async -> RuntimeResult {
  let (items, attackers) = (sized(20_000, quick: 1_000), sized(64, quick: 4))
  let control = await VariantViews(items: items, attackers: 0, spellings: 0, folded: true)
  let raw = await VariantViews(items: items, attackers: attackers, spellings: 16, folded: false)
  let folded = await VariantViews(items: items, attackers: attackers, spellings: 16, folded: true)
  var times: [[Double]] = [[], [], []]
  for round in 0..<max(10, iterations * 2) {
    for (index, run) in [control, raw, folded].enumerated() { times[index].append(await run.edit(round)) }
  }
  let (controlMS, rawMS, foldedMS) = (median(times[0]), median(times[1]), median(times[2]))
  let (rawViews, foldedViews) = (await raw.liveViews, await folded.liveViews)
  for run in [control, raw, folded] { await run.close() }
  return RuntimeResult(
    name: "scope-variants", ms: foldedMS, floorMS: controlMS,
    extra: [
      "vs_control_raw": rawMS / controlMS, "vs_control_folded": foldedMS / controlMS,
      "views_raw": Double(rawViews), "views_folded": Double(foldedViews),
    ],
    note: String(
      format:
        "CPU per edit: control %.3f ms; 64x16 variants raw %.2f ms (%d views), folded %.3f ms (%d views)",
      controlMS, rawMS, rawViews, foldedMS, foldedViews))
}
