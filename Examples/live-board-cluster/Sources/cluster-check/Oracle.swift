// The oracle under rolling kills: scoped clients of two named views (one of them stalled), writers moving
// cards across scopes, clients' own edits, and every instance killed with SIGKILL and started again in
// turn. Every client ends at its scope's views as the server computes them anew at its version, with the
// database's cards; no message ever carries another user's card; every confirmed edit is kept.

import Foundation
import HummingbirdWSClient
import LiveBoard
import Logging
import SimpleSource
import SimpleSourceTesting

/// The users of the oracle's clients; `nil` is a guest, who sees shared cards only.
let oracleUsers: [String?] = ["alice", "bob", nil]

/// `?user=NAME` for a user, nothing for a guest.
func userQuery(_ user: String?) -> String { user.map { "?user=\($0)" } ?? "" }

/// The same until released: a stalled client's reads wait here, so that the server's sends to it back up.
actor Gate {
  private var open = false
  private var waiters: [CheckedContinuation<Void, Never>] = []
  func wait() async {
    if open { return }
    await withCheckedContinuation { waiters.append($0) }
  }
  func release() {
    open = true
    for waiter in waiters { waiter.resume() }
    waiters = []
  }
}

/// A client of one user following two views of the board through nginx (the whole scope, and a search),
/// reconnecting and resuming whenever its connection drops. Every message is checked for cards of other
/// users before its views take it.
actor ScopedClient {
  let user: String?
  let views: RemoteViews<Column>
  let gate: Gate?
  var connections = 0
  var refusals: [String] = []
  var leaks: [String] = []
  var running: Task<Void, Never>?

  init(user: String?, search: String, stalled: Bool) {
    self.user = user
    views = RemoteViews(views: ["all": nil, "search": WireQueryRequest("search", ["text": .string(search)])])
    gate = stalled ? Gate() : nil
  }

  func start(at address: String = settings.web) {
    running = Task { await self.run(address) }
  }

  func stop() {
    running?.cancel()
    running = nil
  }

  func run(_ address: String) async {
    let coder = WireCoder()
    await reconnecting(
      to: "ws://\(address)/live\(userQuery(user))", connected: { await self.connected() },
      subscribe: { coder.encode(await self.views.subscribeRequest) },
      receive: { text in try await self.receive(text, coder: coder) })
  }

  func connected() { connections += 1 }

  func receive(_ text: String, coder: WireCoder) async throws {
    if let gate { await gate.wait() }
    // A card's owner is written in every message that carries the card: none may be another user's.
    var rest = Substring(text)
    while let found = rest.range(of: #""owner":""#) {
      let owner = rest[found.upperBound...].prefix { $0 != "\"" }
      if owner != user ?? "" { leaks.append("a card of \(owner) sent to \(user ?? "a guest")") }
      rest = rest[found.upperBound...]
    }
    do {
      try await views.receive(try coder.decode(Data(text.utf8), as: Column.self))
    } catch {
      refusals.append("\(error)")
      throw error
    }
  }
}

/// How long a read, a write or an edit is sent again while the cluster cannot answer it. Under rolling
/// kills nginx may find no live instance for seconds at a time (each refused connection marks an instance
/// failed for its `fail_timeout`, 3 s, while the next instance is killed), and a debug instance started
/// again catches up before it listens: a bound for a hang, not for how fast a write is made.
let resendFor = Duration.seconds(60)

/// The longest a write or an edit of the oracle took to be answered, resends included: how close the run
/// came to ``resendFor``.
actor LongestResend {
  private(set) var longest = Duration.zero
  func record(since start: ContinuousClock.Instant) { longest = max(longest, .now - start) }
}
let longestResend = LongestResend()

/// Makes one HTTP write as `user` through nginx with an idempotency key, resent while the cluster answers
/// 502 or 503 or drops the connection; returns the final status (201 or 200 when made; 404 or 409 when the
/// card is gone or exists, which the random writers allow).
func write(_ method: String, _ path: String, _ body: String, as user: String?, key: String) async throws
  -> Int
{
  var last = ""
  let start = ContinuousClock.now
  let deadline = start + resendFor
  while ContinuousClock.now < deadline {
    do {
      let (status, data) = try await http(method, settings.web, path + userQuery(user), body, key: key)
      switch status {
      case 200, 201, 404, 409:
        await longestResend.record(since: start)
        return status
      case 502, 503: last = "\(status) \(String(decoding: data, as: UTF8.self))"
      default: throw CheckFailure("\(method) \(path): \(status) \(String(decoding: data, as: UTF8.self))")
      }
    } catch let error as CheckFailure {
      throw error
    } catch {
      // The connection dropped (an instance killed under nginx): resend with the same key.
      last = "\(error)"
    }
    try await Task.sleep(for: .milliseconds(50))
  }
  throw CheckFailure(
    "\(method) \(path): not made in \(resendFor.components.seconds) s, the last answer: \(last)")
}

/// A client's edit over a WebSocket of its own: a new shared card in `doing`, resent with the same id
/// until answered. Returns whether it was confirmed.
func clientEdit(_ id: String, card: String, as user: String) async throws -> Bool {
  let edit =
    #"{"format":"simplesource","formatVersion":2,"type":"edit","id":"\#(id)","operations":[{"op":"insert","#
    + #""items":[{"id":"\#(card)","title":"Card \#(card)"}],"section":"doing"}]}"#
  var last = ""
  let start = ContinuousClock.now
  let deadline = start + resendFor
  while ContinuousClock.now < deadline {
    do {
      let text = try await answer(to: edit, as: user, at: settings.web)
      if text.contains(#""type":"confirmed""#) {
        await longestResend.record(since: start)
        return true
      }
      if text.contains(#""type":"refused""#) { throw EditRefused(text: text) }
      last = text.isEmpty ? "closed with no answer" : text
    } catch let refused as EditRefused {
      throw CheckFailure("edit \(id) refused: \(refused.text)")
    } catch {
      // No answer (the connection dropped, an instance killed under nginx): resend the same edit.
      last = "\(error)"
    }
    try await Task.sleep(for: .milliseconds(100))
  }
  throw CheckFailure("edit \(id): no answer in \(resendFor.components.seconds) s, the last: \(last)")
}

/// The server refused a client's edit.
struct EditRefused: Error { let text: String }

/// Writers that create cards (shared, or private to alice or bob), rename them and move them across scopes
/// (private to shared and back), and clients that make edits, while every instance is killed and started
/// again in turn, twice; one client of ten reads nothing until the end. Then every client, settled at the
/// newest version, shows its views as a fresh subscribe of the same user and views is shown them, and the
/// database's cards; no message carried another user's card; every confirmed edit and acknowledged write
/// is in the database.
@MainActor
func oracleUnderRollingKills() async throws {
  let seed = settings.oracleSeed ?? UInt64.random(in: 0...UInt64.max)
  say("    seed \(seed) (replay: cluster-check --only oracle --oracle-seed \(seed))")
  // The same choices for the same seed on every run, so a failing schedule replays.
  var random = SeededGenerator(seed: seed)
  let searches = ["card", "o-", "1", "ALICE"]
  // The run's own card and edit ids, so that a seed replays on a cluster that ran the oracle before.
  let run = String(seed % 46_656, radix: 36)
  var clients: [ScopedClient] = []
  for number in 0..<10 {
    let client = ScopedClient(
      user: oracleUsers[number % oracleUsers.count], search: searches.randomElement(using: &random)!,
      stalled: number == 9)
    await client.start()
    clients.append(client)
  }
  // Each writer's own choices, drawn from the seed now: the tasks run in whatever order they are scheduled.
  let plans = (0..<2).map { writer in
    (0..<40).map { index -> (kind: Int, user: String?, target: Int) in
      (
        Int.random(in: 0..<4, using: &random), oracleUsers.randomElement(using: &random)!,
        Int.random(in: 0...max(0, index - 1), using: &random)
      )
    }
  }
  // What was confirmed or acknowledged: the cards that must be in the database at the end, in some scope.
  let made = Acknowledged()
  let writers = Task {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (writer, plan) in plans.enumerated() {
        group.addTask {
          for (index, step) in plan.enumerated() {
            let id = "o-\(run)-\(writer)-\(index)", target = "o-\(run)-\(writer)-\(step.target)"
            switch step.kind {
            case 0:
              // A client's edit: a shared card, confirmed over its own WebSocket.
              let user = step.user ?? "carol"
              if try await clientEdit("oracle-\(run)-\(writer)-\(index)", card: id, as: user) {
                await made.add(id, 0)
              }
            case 1:
              // A card of the writer's user: private to alice or bob, shared for a guest.
              let isPrivate = step.user != nil
              let status = try await write(
                "POST", "/api/cards",
                #"{"id":"\#(id)","title":"Card \#(id) \#(step.user ?? "")","column":"todo","private":\#(isPrivate)}"#,
                as: step.user, key: "create-\(id)")
              if status == 201 { await made.add(id, 0) }
            case 2:
              // The target card made private to this user, or shared: it leaves or enters other scopes.
              _ = try await write(
                "PATCH", "/api/cards/\(target)", #"{"private":\#(step.user != nil)}"#,
                as: step.user ?? "alice",
                key: "scope-\(id)")
            default:
              _ = try await write(
                "PATCH", "/api/cards/\(target)", #"{"title":"Renamed \#(id)"}"#, as: step.user,
                key: "rename-\(id)")
            }
          }
        }
      }
      try await group.waitForAll()
    }
  }
  // Rolling SIGKILLs: each instance killed and started again in turn, twice, at seeded pauses.
  for round in 0..<2 {
    for n in 1...3 {
      try await Task.sleep(for: .milliseconds(Int.random(in: 200...900, using: &random)))
      try await cluster("kill", "\(n)")
      try await Task.sleep(for: .milliseconds(Int.random(in: 200...900, using: &random)))
      try await cluster("start-instance", "\(n)")
      say("    round \(round + 1): instance \(n) killed and started again")
    }
  }
  try await within(180, "the oracle's writers") { try await writers.value }
  // One shared write last, which every scope's whole view shows: every client settles at its version.
  _ = try await write(
    "POST", "/api/cards", #"{"id":"oracle-end-\#(run)","title":"The end","column":"done"}"#, as: nil,
    key: "create-oracle-end-\(run)")
  for client in clients { await client.gate?.release() }
  var checked = 0
  for (number, client) in clients.enumerated() {
    let user = client.user
    let truth = try await board(of: user)
    let views = client.views
    try await within(60, "client \(number) reaching version \(truth.version)") {
      if let version = await views.version, version >= truth.version { return }
      for await update in views.updates where update.version >= truth.version { return }
    }
    let (refusals, leaks) = (await client.refusals, await client.leaks)
    try require(refusals.isEmpty, "client \(number) refused: \(refusals)")
    try require(leaks.isEmpty, "client \(number): \(leaks)")
    let (held, version) = (await views.snapshots, await views.version)
    try require(version == truth.version, "client \(number) at \(version ?? -1), past \(truth.version)")
    try require(
      held["all"]?.sections == truth.columns,
      "client \(number) (\(user ?? "guest")) holds other cards than the database")
    // The server's recomputation: a fresh subscribe of the same user and views, on each instance.
    for n in 1...3 {
      let probe = ProbeClient(user: user, views: RemoteViews<Column>(views: client.views.views))
      let shown = try await probe.snapshots(at: settings.instance(n), version: truth.version)
      try require(
        shown == held,
        "client \(number) (\(user ?? "guest")): its views differ from instance \(n)'s at \(truth.version)")
    }
    checked += 1
  }
  for client in clients { await client.stop() }
  // Cards move across scopes but are never deleted here: each one made is in some user's board.
  var ids = Set<String>()
  for user in oracleUsers { ids.formUnion(try await board(of: user).columns.flatMap(\.items).map(\.id)) }
  let edits = await made.cards.keys
  let lost = edits.filter { !ids.contains($0) }
  try require(
    lost.isEmpty, "confirmed edits and acknowledged writes missing from the database: \(lost.sorted())")
  let stalled = await clients[9].connections
  let longest = await longestResend.longest
  say(
    "    \(checked) clients of 3 scopes settled at their scope's views as every instance computes them; \(edits.count) confirmed edits and acknowledged writes kept; no card crossed a scope; the stalled client connected \(stalled) times; the longest write or edit took \(String(format: "%.1f", longest / .seconds(1))) s with its resends (at most \(resendFor.components.seconds) s)"
  )
}

/// One subscribe of `views` as `user` on one instance, read until its views are at a version.
struct ProbeClient {
  let user: String?
  let views: RemoteViews<Column>

  /// The views' states once at `version` or later (exactly `version` is required by the caller).
  func snapshots(at address: String, version: Int) async throws -> [String: Snapshot<Column>] {
    var quiet = Logger(label: "cluster-check")
    quiet.logLevel = .critical
    let (logger, coder, views) = (quiet, WireCoder(), views)
    let url = "ws://\(address)/live\(userQuery(user))"
    return try await within(30, "views at \(address) reaching \(version)") {
      try await WebSocketClient.connect(
        url: url, configuration: .init(maxFrameSize: 1 << 22), logger: logger
      ) { inbound, outbound, _ in
        try await outbound.write(
          .text(String(decoding: coder.encode(await views.subscribeRequest), as: UTF8.self)))
        for try await message in inbound.messages(maxSize: 1 << 22) {
          guard case .text(let text) = message else { continue }
          try await views.receive(try coder.decode(Data(text.utf8), as: Column.self))
          if let held = await views.version, held >= version { return }
        }
      }
      return await views.snapshots
    }
  }
}
