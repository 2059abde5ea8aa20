// The fault tests of the live-board cluster (`cluster.sh`: PostgreSQL, three instances, nginx): clients follow
// the board through nginx while writers write, and an instance is killed, PostgreSQL restarts, a transaction
// fails, an instance starts late. Each client is a RemoteDataSource, which checks every batch: a gap, a
// duplicate or a batch that does not apply is refused and counted. Prints each test, then `N passed, 0 failed`.
//
//   cluster-check --script ./cluster.sh [--web 8090] [--instance-port 8090] [--only oracle --oracle-seed N]

import Foundation
import HummingbirdWSClient
import LiveBoard
import Logging
import SimpleSource

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

struct Settings: Sendable {
  var script = "./cluster.sh"
  var webPort = 8090
  var instanceBase = 8090
  /// An address to follow briefly, printing what the client sees: for finding out why a check failed.
  var probe: String?
  /// How many times the schedule test restarts PostgreSQL.
  var scheduleRestarts = 5
  /// The oracle's seed: random (and printed) when not given.
  var oracleSeed: UInt64?
  /// Runs only the checks whose title contains this text (all when `nil`).
  var only: String?

  static func parse() -> Settings {
    var settings = Settings()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
      let value = arguments.next()
      switch argument {
      case "--script": settings.script = value ?? settings.script
      case "--web": settings.webPort = value.flatMap(Int.init) ?? settings.webPort
      case "--instance-port": settings.instanceBase = value.flatMap(Int.init) ?? settings.instanceBase
      case "--probe": settings.probe = value
      case "--schedule-restarts":
        settings.scheduleRestarts = value.flatMap(Int.init) ?? settings.scheduleRestarts
      case "--oracle-seed": settings.oracleSeed = value.flatMap { UInt64($0) }
      case "--only": settings.only = value
      default:
        say(
          "usage: cluster-check --script cluster.sh [--web PORT] [--instance-port BASE] [--schedule-restarts N] [--oracle-seed N] [--only TEXT]"
        )
        exit(2)
      }
    }
    return settings
  }

  var web: String { "127.0.0.1:\(webPort)" }
  func instance(_ n: Int) -> String { "127.0.0.1:\(instanceBase + n)" }
}

/// Prints a line at once (stdout is a pipe in the check script).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let settings = Settings.parse()

struct CheckFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
  if !condition { throw CheckFailure(message()) }
}

/// Runs `cluster.sh` with `arguments`; throws when it fails. Awaits the process's end through its
/// termination handler (`waitUntilExit` blocks the thread, and on the main thread never returns here).
func cluster(_ arguments: String...) async throws {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/bash")
  process.arguments = [settings.script] + arguments
  let status: Int32 = try await withCheckedThrowingContinuation { continuation in
    process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
    do { try process.run() } catch { continuation.resume(throwing: error) }
  }
  try require(status == 0, "cluster.sh \(arguments.joined(separator: " ")) failed")
}

/// What `cluster.sh psql -At -c QUERY` prints, trimmed.
func psql(_ query: String) async throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/bash")
  process.arguments = [settings.script, "psql", "-At", "-c", query]
  let output = Pipe()
  process.standardOutput = output
  let status: Int32 = try await withCheckedThrowingContinuation { continuation in
    process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
    do { try process.run() } catch { continuation.resume(throwing: error) }
  }
  let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  try require(status == 0, "psql \(query) failed")
  return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The instance with the most established connections (the WebSockets nginx opened for clients), from
/// /proc/net/tcp: the one whose death moves the most clients.
func busiestInstance() throws -> Int {
  let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
  var counts: [Int: Int] = [:]
  for line in table.split(separator: "\n").dropFirst() {
    let fields = line.split(separator: " ")
    guard fields.count > 3, fields[3] == "01",
      let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
    else { continue }
    for n in 1...3 where port == settings.instanceBase + n { counts[n, default: 0] += 1 }
  }
  return counts.max { $0.value < $1.value }?.key ?? 1
}

/// Returns what `body` returns, or throws when it takes longer than `seconds`: a deadline for awaiting an
/// event, so that a check that fails ends instead of hanging.
@discardableResult
func within<T: Sendable>(_ seconds: Int, _ what: String, _ body: @escaping @Sendable () async throws -> T)
  async throws -> T
{
  try await withThrowingTaskGroup(of: T?.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(for: .seconds(seconds))
      return nil
    }
    defer { group.cancelAll() }
    guard let first = try await group.next(), let value = first else {
      throw CheckFailure("\(what): not within \(seconds) s")
    }
    return value
  }
}

// MARK: - HTTP

struct BoardReply: Decodable {
  var version: Int
  var stream: String
  var columns: [Column]
}

struct WriteReply: Decodable { var version: Int }

func http(
  _ method: String, _ address: String, _ path: String, _ body: String? = nil, timeout: TimeInterval = 10,
  key: String? = nil
) async throws -> (Int, Data) {
  var request = URLRequest(url: URL(string: "http://\(address)\(path)")!)
  request.httpMethod = method
  request.setValue("application/json", forHTTPHeaderField: "content-type")
  if let key { request.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
  request.httpBody = body.map { Data($0.utf8) }
  request.timeoutInterval = timeout
  let (data, response) = try await URLSession.shared.data(for: request)
  return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
}

/// The board as PostgreSQL holds it, as `user` sees it (a guest, by default), through nginx. Asked again
/// for up to ``resendFor`` while the answer is 502 (nginx found no live instance: one just killed or
/// restarted is marked failed for a few seconds, as is one that answered 503) or 503 (an instance's
/// database is unavailable), or while the connection drops: reads are idempotent.
func board(of user: String? = nil) async throws -> BoardReply {
  var last = ""
  let deadline = ContinuousClock.now + resendFor
  while ContinuousClock.now < deadline {
    let answer: (status: Int, data: Data)
    do {
      answer = try await http("GET", settings.web, "/api/board\(userQuery(user))")
    } catch {
      last = "\(error)"
      try await Task.sleep(for: .milliseconds(100))
      continue
    }
    if answer.status == 200 { return try JSONDecoder().decode(BoardReply.self, from: answer.data) }
    last = "\(answer.status) \(String(decoding: answer.data, as: UTF8.self))"
    guard answer.status == 502 || answer.status == 503 else { break }
    try await Task.sleep(for: .milliseconds(100))
  }
  throw CheckFailure("GET /api/board as \(user ?? "a guest"): \(last)")
}

/// Writes that were acknowledged: card id → the version the reply named.
actor Acknowledged {
  var cards: [String: Int] = [:]
  func add(_ id: String, _ version: Int) { cards[id] = version }
}

/// Creates card `id` through `address`, sent again for up to ``resendFor`` while the cluster answers 502 or
/// 503 or drops the connection (an instance killed, PostgreSQL restarting); returns the version when
/// acknowledged with 201.
@discardableResult
func create(
  _ id: String, title: String? = nil, at address: String = settings.web, into acknowledged: Acknowledged
)
  async throws -> Int?
{
  let body = #"{"id":"\#(id)","title":"\#(title ?? "Card \(id)")","column":"todo"}"#
  var last = ""
  let deadline = ContinuousClock.now + resendFor
  while ContinuousClock.now < deadline {
    do {
      // Every attempt carries one Idempotency-Key: an attempt whose reply was lost (a 504, a dropped
      // connection) is answered again with its first status and version, on any instance.
      let (status, data) = try await http("POST", address, "/api/cards", body, key: "create-\(id)")
      if status == 201 {
        let version = try JSONDecoder().decode(WriteReply.self, from: data).version
        await acknowledged.add(id, version)
        return version
      }
      // Made before under another key (not by this check): present, not acknowledged.
      if status == 409 { return nil }
      last = "\(status) \(String(decoding: data, as: UTF8.self))"
      if status != 503 && status != 502 { throw CheckFailure("POST \(id): \(last)") }
    } catch let error as CheckFailure {
      throw error
    } catch {
      // The connection dropped: resend with the same key.
      last = "\(error)"
    }
    try await Task.sleep(for: .milliseconds(100))
  }
  throw CheckFailure(
    "POST \(id): the cluster did not accept it in \(resendFor.components.seconds) s, the last answer: \(last)"
  )
}

// MARK: - Following clients

/// A client following the board through one address, reconnecting and resuming whenever its connection
/// drops; its RemoteDataSource checks every batch.
actor Follower {
  let remote = RemoteDataSource<Column>()
  var address: String
  var connections = 0
  var resets = 0
  var resumes = 0
  var refusals: [String] = []
  var running: Task<Void, Never>?

  init(address: String) { self.address = address }

  func start() {
    running = Task { await self.run() }
  }

  func stop() {
    running?.cancel()
    running = nil
  }

  /// Follows `address` from now on: the current connection ends, the next resumes there.
  func follow(_ address: String) {
    stop()
    self.address = address
    start()
  }

  func run() async {
    let coder = WireCoder()
    await reconnecting(
      to: "ws://\(address)/live", connected: { await self.connected() },
      subscribe: { coder.encode(await self.remote.subscribeRequest) },
      receive: { text in try await self.receive(try coder.decode(Data(text.utf8))) })
  }

  func connected() { connections += 1 }

  func receive(_ message: WireMessage<Column>) async throws {
    switch message {
    case .reset: resets += 1
    case .resumed: resumes += 1
    default: break
    }
    do {
      try await remote.receive(message)
    } catch {
      refusals.append("\(error)")
      throw error
    }
  }

  var summary: (connections: Int, resets: Int, resumes: Int, refusals: [String]) {
    (connections, resets, resumes, refusals)
  }
}

/// Follows `url` until the task is cancelled, connecting again 50 ms after each connection ends (as a
/// client that lost its connection does): on each connection, `connected` is told, the message
/// `subscribe` makes is sent, and every text message received goes to `receive` (which ends the connection
/// by throwing).
func reconnecting(
  to url: String, connected: @escaping @Sendable () async -> Void,
  subscribe: @escaping @Sendable () async -> Data, receive: @escaping @Sendable (String) async throws -> Void
) async {
  var quiet = Logger(label: "cluster-check")
  quiet.logLevel = .critical
  let logger = quiet
  while !Task.isCancelled {
    await connected()
    do {
      try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 22), logger: logger)
      {
        inbound, outbound, _ in
        try await outbound.write(.text(String(decoding: await subscribe(), as: UTF8.self)))
        for try await message in inbound.messages(maxSize: 1 << 22) {
          guard case .text(let text) = message else { continue }
          try await receive(text)
        }
      }
    } catch {}
    if Task.isCancelled { return }
    try? await Task.sleep(for: .milliseconds(50))  // a reconnecting client's pause
  }
}

/// Waits until every follower holds `version`, then checks each: no refusal (no gap, no duplicate, every
/// batch applied), the database's cards, and no reset after the first unless `resetsAllowed`.
func converge(_ followers: [Follower], to truth: BoardReply) async throws {
  for (index, follower) in followers.enumerated() {
    let remote = follower.remote
    try await within(30, "client \(index) reaching version \(truth.version)") {
      await remote.reached(remoteVersion: truth.version)
    }
    let summary = await follower.summary
    try require(summary.refusals.isEmpty, "client \(index) refused: \(summary.refusals)")
    try require(
      summary.resets == 1, "client \(index) reset \(summary.resets) times (resumes \(summary.resumes))")
    let held = await remote.snapshot.sections
    try require(held == truth.columns, "client \(index) holds other cards than the database")
  }
}

/// Checks that instance `n`'s own source holds the database's board: a client connected to it directly.
func checkInstance(_ n: Int, equals truth: BoardReply, acknowledged: Acknowledged) async throws {
  let follower = Follower(address: settings.instance(n))
  await follower.start()
  defer { Task { await follower.stop() } }
  let remote = follower.remote
  try await within(30, "instance \(n) reaching version \(truth.version)") {
    await remote.reached(remoteVersion: truth.version)
  }
  let held = await remote.snapshot
  try require(held.sections == truth.columns, "instance \(n) shows other cards than the database")
  for (id, _) in await acknowledged.cards {
    try require(held.contains(item: id), "instance \(n) lacks acknowledged card \(id)")
  }
}

// MARK: - The tests

let acknowledged = Acknowledged()
var followers: [Follower] = []

@MainActor
func startFollowers(_ count: Int) async throws {
  let head = try await board()
  for _ in 0..<count {
    let follower = Follower(address: settings.web)
    await follower.start()
    followers.append(follower)
  }
  for follower in followers {
    let remote = follower.remote
    try await within(20, "a client's first state") { await remote.reached(remoteVersion: head.version) }
  }
}

/// Two writers create `count` cards each through nginx, the `prefix`ed ids; `during` runs once a third
/// of them are acknowledged.
func writeWhile(_ prefix: String, count: Int, during: @escaping @Sendable () async throws -> Void)
  async throws
{
  try await withThrowingTaskGroup(of: Void.self) { group in
    for writer in 0..<2 {
      group.addTask {
        for index in 0..<count {
          try await create("\(prefix)-\(writer)-\(index)", into: acknowledged)
        }
      }
    }
    group.addTask {
      while await acknowledged.cards.keys.filter({ $0.hasPrefix(prefix) }).count < 2 * count / 3 {
        await Task.yield()
        try await Task.sleep(for: .milliseconds(5))
      }
      try await during()
    }
    try await group.waitForAll()
  }
}

/// The instance the first test killed; the next starts it again.
var killed = 1

@MainActor
func killInstance() async throws {
  try await startFollowers(6)
  say("    six clients follow through nginx")
  var before: [Int] = []
  for follower in followers { before.append(await follower.summary.connections) }
  let busiest = try busiestInstance()
  killed = busiest
  try await writeWhile("k", count: 30) {
    try await cluster("kill", "\(busiest)")
    say("    instance \(busiest), which had the most clients, killed")
  }
  let truth = try await board()
  say("    writes done at version \(truth.version)")
  try await converge(followers, to: truth)
  var after: [(connections: Int, resets: Int, resumes: Int, refusals: [String])] = []
  for follower in followers { after.append(await follower.summary) }
  let moved = zip(before, after).filter { $0 < $1.connections }
  try require(!moved.isEmpty, "no client was connected to the killed instance")
  try require(moved.allSatisfy { $1.resumes >= 1 }, "a client of the killed instance did not resume")
  for n in 1...3 where n != killed { try await checkInstance(n, equals: truth, acknowledged: acknowledged) }
  say(
    "    \(moved.count) of \(followers.count) clients moved to another instance and resumed; version \(truth.version)"
  )
}

@MainActor
func restartPostgres() async throws {
  try await cluster("start-instance", "\(killed)")
  try await cluster("restart-postgres")
  // Each instance writes again once its connections are back; then every one follows the log again.
  for n in 1...3 { try await create("pg-direct-\(n)", at: settings.instance(n), into: acknowledged) }
  for index in 0..<20 { try await create("pg-\(index)", into: acknowledged) }
  let truth = try await board()
  try await converge(followers, to: truth)
  for n in 1...3 { try await checkInstance(n, equals: truth, acknowledged: acknowledged) }
  say(
    "    every instance wrote and followed again; clients at version \(truth.version), no reset, no refusal")
}

@MainActor
func failedTransaction() async throws {
  try await cluster(
    "psql", "-c",
    """
    CREATE FUNCTION refuse_card() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$
      LANGUAGE plpgsql;
    CREATE TRIGGER refuse_card BEFORE INSERT ON card FOR EACH ROW WHEN (NEW.title = 'refuse me')
      EXECUTE FUNCTION refuse_card();
    """)
  let before = try await board()
  let (status, _) = try await http(
    "POST", settings.web, "/api/cards", #"{"id":"refused","title":"refuse me","column":"todo"}"#)
  try require(status == 500 || status == 503, "a refused transaction answered \(status)")
  try require(try await board().version == before.version, "a refused transaction made a version")
  try await cluster("psql", "-c", "DROP TRIGGER refuse_card ON card; DROP FUNCTION refuse_card();")
  let next = try await create("after-refusal", into: acknowledged)
  try require(
    next == before.version + 1, "the next write made \(String(describing: next)), not \(before.version + 1)")
  let truth = try await board()
  try await converge(followers, to: truth)
  for n in 1...3 {
    try await checkInstance(n, equals: truth, acknowledged: acknowledged)
  }
  try require(!truth.columns.contains { $0.items.contains { $0.id == "refused" } }, "the refused card exists")
  // The log entry refused, on each path a group takes: in its one statement, and in the locked transaction
  // (taken for a checkpoint's version), where the statement that writes the entry also notifies and so
  // returns a row: the refusal comes with that row, and the write fails as well (its COMMIT would otherwise
  // end in a silent ROLLBACK).
  var statuses: [Int] = []
  for path in ["one statement", "locked"] {
    if path == "locked" {
      let interval = Int(ProcessInfo.processInfo.environment["CHECKPOINT_INTERVAL"] ?? "") ?? 500
      var version = try await board().version
      while (version + 1) % interval != 0 {
        guard let made = try await create("pad-\(UUID().uuidString.prefix(8))", into: acknowledged) else {
          throw CheckFailure("a padding card was refused")
        }
        version = made
      }
    }
    let held = try await board()
    try await cluster(
      "psql", "-c",
      """
      CREATE FUNCTION refuse_entry() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$
        LANGUAGE plpgsql;
      CREATE TRIGGER refuse_entry BEFORE INSERT ON board_log FOR EACH ROW EXECUTE FUNCTION refuse_entry();
      """)
    let id = "no-entry-\(statuses.count)"
    let (entryStatus, _) = try await http(
      "POST", settings.web, "/api/cards", #"{"id":"\#(id)","title":"No entry","column":"todo"}"#)
    try await cluster("psql", "-c", "DROP TRIGGER refuse_entry ON board_log; DROP FUNCTION refuse_entry();")
    try require(
      entryStatus == 500 || entryStatus == 503,
      "a write whose log entry was refused (\(path)) answered \(entryStatus)")
    statuses.append(entryStatus)
    let after = try await create("after-entry-refusal-\(statuses.count)", into: acknowledged)
    try require(
      after == held.version + 1, "the next write made \(String(describing: after)), not \(held.version + 1)")
    let final = try await board()
    try await converge(followers, to: final)
    for n in 1...3 { try await checkInstance(n, equals: final, acknowledged: acknowledged) }
    try require(
      !final.columns.contains { $0.items.contains { $0.id == id } }, "the card without entry exists")
  }
  say(
    "    status \(status); no instance made version \(before.version + 1) for it; the next write did; a refused log "
      + "entry in one statement and in the locked path: statuses \(statuses), no version"
  )
}

/// `board_commit`, called as a writer would: from a version the stream has left, and with an edit whose
/// answer is recorded already. Either answers so and writes nothing: no row, no answer, no entry, no
/// version.
@MainActor
func commitGuards() async throws {
  let stream = try await psql("SELECT name FROM board_stream")
  let head = try await board().version
  func call(base: Int, answers: String, id: String) async throws -> String {
    let insert = #"[{"at":"0","column":"todo","id":"\#(id)","kind":"insert","owner":null,"title":"Guard"}]"#
    let entry = "not an entry: never logged"
    return try await psql(
      """
      SELECT head || '|' || coalesce(taken::text, 'null') FROM board_commit(
        '\(stream)', \(base), '\(answers)'::jsonb, '\(insert)'::jsonb, '\(entry)', '\(stream):\(base + 1)')
      """)
  }
  func unchanged(_ what: String) async throws {
    let counts = try await psql(
      """
      SELECT (SELECT version FROM board_stream) || ' ' || (SELECT count(*) FROM card WHERE id LIKE 'guard-%')
        || ' ' || (SELECT count(*) FROM board_log WHERE version > \(head))
        || ' ' || (SELECT count(*) FROM edit_answer WHERE scope = 'guard-scope')
      """)
    try require(counts == "\(head) 0 0 1", "\(what) wrote: version, cards, entries, answers = \(counts)")
  }
  _ = try await psql(
    "INSERT INTO edit_answer (scope, id, version, fingerprint) VALUES ('guard-scope', 'answered', \(head), 'f')"
  )
  let moved = try await call(
    base: head - 1, answers: #"[{"scope":"guard-scope","id":"new","fingerprint":"f"}]"#, id: "guard-moved")
  try require(moved == "\(head)|null", "from a version the stream left: \(moved)")
  try await unchanged("a call from a version the stream left")
  let answered = try await call(
    base: head,
    answers: #"[{"scope":"guard-scope","id":"new","fingerprint":"f"},"#
      + #"{"scope":"guard-scope","id":"answered","fingerprint":"f"}]"#,
    id: "guard-answered")
  try require(answered == "\(head)|{1}", "with an edit answered already: \(answered)")
  try await unchanged("a call with an edit answered already")
  _ = try await psql("DELETE FROM edit_answer WHERE scope = 'guard-scope'")
  say("    from a version the stream left: \(moved); with the second edit answered already: \(answered)")
}

/// Another session holds the stream's row lock a little longer than `lock_timeout` (2 s) and well within
/// the write deadline (5 s): a write sent meanwhile is refused for the lock once, made again, and answered
/// 201 once the lock is free, with one version.
@MainActor
func heldLock() async throws {
  let before = try await board()
  let hold = "SELECT pg_sleep(2.5) AS holding_the_stream"
  let holder = Task {
    try await cluster(
      "psql", "-c", "BEGIN; SELECT version FROM board_stream FOR UPDATE; \(hold); COMMIT;")
  }
  // The write is sent once the lock is held: polled, this being a check against a real database.
  try await within(10, "the lock held by another session") {
    while try await psql(
      "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%holding_the_stream%'"
        + " AND pid <> pg_backend_pid()") != "1"
    {
      try await Task.sleep(for: .milliseconds(20))
    }
  }
  let start = ContinuousClock.now
  let (status, data) = try await http(
    "POST", settings.web, "/api/cards", #"{"id":"after-lock","title":"After the lock","column":"todo"}"#)
  let waited = ContinuousClock.now - start
  try await holder.value
  try require(
    status == 201, "a write behind a held lock answered \(status) \(String(decoding: data, as: UTF8.self))")
  let version = try JSONDecoder().decode(WriteReply.self, from: data).version
  try require(version == before.version + 1, "the write made \(version), not \(before.version + 1)")
  await acknowledged.add("after-lock", version)
  let truth = try await board()
  try await converge(followers, to: truth)
  for n in 1...3 { try await checkInstance(n, equals: truth, acknowledged: acknowledged) }
  say("    answered 201 after \(waited.formatted(.units(allowed: [.milliseconds]))), version \(version)")
}

/// Inserts before a card, moves back, forward and across columns, and deletes, through nginx (so on every
/// instance): the rows the database holds are the board every instance shows, in the same order, with each
/// column's positions dense (0 to count - 1).
@MainActor
func rowsOfEveryKind() async throws {
  func write(_ method: String, _ path: String, _ body: String? = nil) async throws {
    let (status, data) = try await http(method, settings.web, path, body)
    try require(
      status == 200 || status == 201,
      "\(method) \(path) answered \(status): \(String(decoding: data, as: UTF8.self))")
  }
  for id in ["a", "b", "c", "d"] {
    try await write("POST", "/api/cards", #"{"id":"rows-\#(id)","title":"Row \#(id)","column":"todo"}"#)
  }
  try await write("POST", "/api/cards", #"{"id":"rows-e","title":"Row e","column":"todo","before":"rows-c"}"#)
  try await write("POST", "/api/cards/rows-d/move", #"{"column":"todo","before":"rows-a"}"#)
  try await write("POST", "/api/cards/rows-a/move", #"{"column":"todo","before":"rows-c"}"#)
  try await write("POST", "/api/cards/rows-b/move", #"{"column":"doing"}"#)
  try await write("POST", "/api/cards/rows-c/move", #"{"column":"doing","before":"rows-b"}"#)
  try await write("DELETE", "/api/cards/rows-e")
  try await write("DELETE", "/api/cards/rows-c")
  let truth = try await board()
  func ours(_ column: String) -> [String] {
    truth.columns.first { $0.id == column }?.items.map(\.id).filter { $0.hasPrefix("rows-") } ?? []
  }
  try require(ours("todo") == ["rows-d", "rows-a"], "todo holds \(ours("todo")), not rows-d, rows-a")
  try require(ours("doing") == ["rows-b"], "doing holds \(ours("doing")), not rows-b")
  let gaps = try await psql(
    """
    SELECT count(*) FROM (
      SELECT count(*) AS n, min(position) AS lo, max(position) AS hi, count(DISTINCT position) AS d
      FROM card GROUP BY columnid) AS c
    WHERE lo <> 0 OR hi <> n - 1 OR d <> n
    """)
  try require(gaps == "0", "\(gaps) column(s) whose positions are not 0 to count - 1")
  try await converge(followers, to: truth)
  for n in 1...3 { try await checkInstance(n, equals: truth, acknowledged: acknowledged) }
  say(
    "    9 writes of every kind through nginx; the database's rows are every instance's board, version \(truth.version)"
  )
}

@MainActor
func lateInstance() async throws {
  try await cluster("kill", "3")
  // More versions than two checkpoint intervals: the log is pruned meanwhile.
  for index in 0..<40 { try await create("late-\(index)", into: acknowledged) }
  try await cluster("start-instance", "3")
  // A client that holds a recent version, following instance 2, moves to instance 3: it resumes.
  let client = Follower(address: settings.instance(2))
  await client.start()
  let head = try await board()
  let remote = client.remote
  try await within(20, "a client of instance 2") { await remote.reached(remoteVersion: head.version) }
  await client.stop()
  for index in 0..<3 { try await create("late-after-\(index)", at: settings.instance(1), into: acknowledged) }
  await client.follow(settings.instance(3))
  let truth = try await board()
  try await within(20, "the client on instance 3") { await remote.reached(remoteVersion: truth.version) }
  let summary = await client.summary
  await client.stop()
  // Instance 3 makes the client's view (each user's scope is one) only now, after the client's version: the
  // view answers the resume from the source's retained state at that version.
  try require(
    summary.resets == 1 && summary.resumes == 1 && summary.refusals.isEmpty,
    "moved client: one reset (its first subscribe) and one resume expected: \(summary)")
  try require(await remote.snapshot.sections == truth.columns, "the moved client holds other cards")
  try await checkInstance(3, equals: truth, acknowledged: acknowledged)
  // A client holding a version older than the log resets.
  let stale = Follower(address: settings.instance(3))
  try await stale.remote.receive(.reset(stream: truth.stream, version: 1, snapshot: Snapshot()))
  await stale.start()
  let staleRemote = stale.remote
  try await within(20, "a stale client") { await staleRemote.reached(remoteVersion: truth.version) }
  let staleSummary = await stale.summary
  await stale.stop()
  try require(staleSummary.resets == 1 && staleSummary.resumes == 0, "a stale client: \(staleSummary)")
  try require(await staleRemote.snapshot.sections == truth.columns, "the stale client holds other cards")
  say(
    "    instance 3 replayed the log from its checkpoint; a client at \(head.version) moved there and resumed"
      + " (its view made there after that version); one at 1 reset")
}

@MainActor
func hungInstance() async throws {
  let hung = 2
  try await cluster("pause", "\(hung)")
  say("    instance \(hung) hangs (SIGSTOP)")
  // Reads and writes through nginx while it hangs, several at once so that some reach it: each is answered
  // within nginx's 8 s timeouts (a read by another instance then, a write with 504), never held.
  let answers = try await withThrowingTaskGroup(of: (String, Int, Duration).self) { group in
    for index in 0..<12 {
      group.addTask {
        let clock = ContinuousClock()
        let start = clock.now
        let (method, path, body): (String, String, String?) =
          index % 2 == 0
          ? ("GET", "/api/board", nil)
          : ("POST", "/api/cards", #"{"id":"hung-\#(index)","title":"Card hung-\#(index)","column":"todo"}"#)
        let (status, _) = try await http(method, settings.web, path, body, timeout: 30)
        return ("\(method) \(index)", status, clock.now - start)
      }
    }
    var answers: [(String, Int, Duration)] = []
    for try await answer in group { answers.append(answer) }
    return answers
  }
  try await cluster("resume", "\(hung)")
  let slowest = answers.map(\.2).max() ?? .zero
  let statuses = answers.map { "\($0.0): \($0.1)" }.sorted()
  try require(slowest < .seconds(10), "a request took \(slowest) while an instance hung: \(statuses)")
  // Answered, not held: a read goes to another instance after the timeout, or is answered 502 when nginx
  // finds none it may use then; a write that reached the hung instance is answered 504, never resent.
  try require(
    answers.allSatisfy {
      $0.0.hasPrefix("GET") ? [200, 502, 503].contains($0.1) : [201, 502, 503, 504].contains($0.1)
    },
    "answers while an instance hung: \(statuses)")
  // A write answered 504 may have been made once the instance ran again: sent again, it is made or found.
  for (name, status, _) in answers where name.hasPrefix("POST") && status != 201 {
    try await create("hung-\(name.dropFirst(5))", into: acknowledged)
  }
  let truth = try await board()
  try await converge(followers, to: truth)
  for n in 1...3 { try await checkInstance(n, equals: truth, acknowledged: acknowledged) }
  let timedOut = answers.filter { $0.1 == 504 }.count
  let readsServed = answers.filter { $0.0.hasPrefix("GET") && $0.1 == 200 }.count
  let seconds = Double(slowest.components.seconds) + Double(slowest.components.attoseconds) / 1e18
  say(
    "    12 requests answered in at most \(String(format: "%.1f", seconds)) s (\(readsServed) of 6 reads 200,"
      + " \(timedOut) writes 504, none resent); every instance caught up")
}

/// Sends `edit` (an edit message's JSON) as `user` over a WebSocket of its own to `address`; returns its
/// answer's text.
func answer(to edit: String, as user: String, at address: String) async throws -> String {
  var quiet = Logger(label: "cluster-check")
  quiet.logLevel = .critical
  let logger = quiet
  let answers = Answered()
  try await within(20, "an answer to \(user)'s edit") {
    try await WebSocketClient.connect(
      url: "ws://\(address)/live?user=\(user)", configuration: .init(maxFrameSize: 1 << 22), logger: logger
    ) { inbound, outbound, _ in
      try await outbound.write(.text(edit))
      for try await message in inbound.messages(maxSize: 1 << 22) {
        guard case .text(let text) = message else { continue }
        if text.contains(#""type":"confirmed""#) || text.contains(#""type":"refused""#) {
          await answers.set(text)
          return
        }
      }
    }
  }
  return await answers.text ?? ""
}

actor Answered {
  var text: String?
  func set(_ text: String) { self.text = text }
}

/// Two users number their edits alike, on different instances: each is made and answered as its own; a
/// resend reaches the first answer on the instance that made it, and never the other user's anywhere.
@MainActor
func reusedEditIDs() async throws {
  func insert(_ id: String, _ card: String, owner: String? = nil) -> String {
    let owned = owner.map { #","owner":"\#($0)""# } ?? ""
    return
      #"{"format":"simplesource","formatVersion":2,"type":"edit","id":"\#(id)","operations":[{"op":"insert","#
      + #""items":[{"id":"\#(card)","title":"\#(card)"\#(owned)}],"section":"doing"}]}"#
  }
  let alices = try await answer(to: insert("1", "alice-1"), as: "alice", at: settings.instance(1))
  let bobs = try await answer(to: insert("1", "bob-1", owner: "bob"), as: "bob", at: settings.instance(2))
  try require(alices.contains(#""type":"confirmed""#), "alice's edit: \(alices)")
  try require(bobs.contains(#""type":"confirmed""#) && bobs != alices, "bob's edit: \(bobs)")
  let bobsAgain = try await answer(
    to: insert("1", "bob-1", owner: "bob"), as: "bob", at: settings.instance(2))
  try require(bobsAgain == bobs, "bob's resend on the instance that made it: \(bobsAgain)")
  // Instance 2 never made alice's "1": it answers her resend from the database, with her first answer.
  let alicesThere = try await answer(to: insert("1", "alice-1"), as: "alice", at: settings.instance(2))
  try require(alicesThere == alices, "alice's resend on instance 2: \(alicesThere), first \(alices)")
  // A shared write last: the followers (guests) see no version of bob's private card.
  try await create("after-edits", into: acknowledged)
  let truth = try await board()
  let ids = Set(truth.columns.flatMap(\.items).map(\.id))
  try require(ids.contains("alice-1") && !ids.contains("bob-1"), "the shared board: \(ids.sorted())")
  let (bobStatus, bobBoard) = try await http("GET", settings.web, "/api/board?user=bob")
  try require(bobStatus == 200 && String(decoding: bobBoard, as: UTF8.self).contains("bob-1"), "bob's card")
  try await converge(followers, to: truth)
  say("    alice and bob both made edit 1 (instances 1 and 2); resends answered per user; nothing crossed")
}

/// An edit made on one instance, which is then killed: its resend to another instance, and to the first
/// once started again (neither remembers it in memory), gets the first answer from the database and is
/// not made again, although another write changed the card in between.
@MainActor
func answersOnAnyInstance() async throws {
  let head = try await board().version
  func rename(_ title: String) -> String {
    #"{"format":"simplesource","formatVersion":2,"type":"edit","base":\#(head),"id":"carol-1","#
      + #""operations":[{"op":"replace","item":{"id":"alice-1","title":"\#(title)"}}]}"#
  }
  let first = try await answer(to: rename("Carol's"), as: "carol", at: settings.instance(1))
  try require(first.contains(#""type":"confirmed""#), "carol's edit: \(first)")
  try await cluster("kill", "1")
  let (status, _) = try await http(
    "PATCH", settings.instance(2), "/api/cards/alice-1", #"{"title":"Another's"}"#)
  try require(status == 200, "the other write: \(status)")
  let there = try await answer(to: rename("Carol's"), as: "carol", at: settings.instance(2))
  try require(there == first, "carol's resend on instance 2: \(there), first \(first)")
  try await cluster("start-instance", "1")
  let back = try await answer(to: rename("Carol's"), as: "carol", at: settings.instance(1))
  try require(back == first, "carol's resend on instance 1, started again: \(back), first \(first)")
  let card = try await board().columns.flatMap(\.items).first { $0.id == "alice-1" }
  try require(card?.title == "Another's", "carol's rename was made again: \(String(describing: card))")
  try await create("after-resends", into: acknowledged)
  try await converge(followers, to: try await board())
  say(
    "    carol's edit made on instance 1, which was killed; resent to 2 and to 1 restarted: one answer, made once"
  )
}

/// The same edit sent to two instances at once, beside other writers on both, ten times: each edit is made
/// once and both of its answers are its first; the writes beside it are made. When both instances plan it
/// before either commits, the second finds its answer recorded as it commits its group: that group is
/// rolled back and made again without the edit, which is answered from the record.
@MainActor
func racedResends() async throws {
  let head = try await board().version
  _ = try await create("raced", into: acknowledged)
  for round in 0..<10 {
    let edit =
      #"{"format":"simplesource","formatVersion":2,"type":"edit","base":\#(head),"id":"erin-\#(round)","#
      + #""operations":[{"op":"replace","item":{"id":"raced","title":"Erin \#(round)"}}]}"#
    async let first = answer(to: edit, as: "erin", at: settings.instance(1))
    async let second = answer(to: edit, as: "erin", at: settings.instance(2))
    // Four writes beside it on each instance, so that it shares a group with some of them; each is sent
    // once: no fault is injected here, so anything but 201 (a 503 for another write's conflict) fails.
    async let beside = withThrowingTaskGroup(of: Int.self) { group in
      for index in 0..<8 {
        group.addTask {
          let id = "beside-\(round)-\(index)"
          let body = #"{"id":"\#(id)","title":"Card \#(id)","column":"todo"}"#
          let (status, data) = try await http("POST", settings.instance(1 + index % 2), "/api/cards", body)
          if status == 201 {
            await acknowledged.add(id, try JSONDecoder().decode(WriteReply.self, from: data).version)
          }
          return status
        }
      }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    let (one, two, statuses) = try await (first, second, beside)
    try require(one.contains(#""type":"confirmed""#), "erin's edit \(round) on instance 1: \(one)")
    try require(two == one, "erin's edit \(round) on instance 2: \(two), on instance 1: \(one)")
    try require(statuses.allSatisfy { $0 == 201 }, "the writes beside erin's edit \(round): \(statuses)")
  }
  let log = try await psql(
    "SELECT count(*) FROM edit_answer WHERE scope = 'erin' AND id LIKE 'erin-%'")
  try require(log.trimmingCharacters(in: .whitespacesAndNewlines) == "10", "erin's answers recorded: \(log)")
  let card = try await board().columns.flatMap(\.items).first { $0.id == "raced" }
  try require(card?.title == "Erin 9", "the raced card: \(String(describing: card))")
  try await converge(followers, to: try await board())
  say("    10 edits each sent to instances 1 and 2 at once, beside 80 writes: each made once, answered alike")
}

/// Every HTTP request the schedule's writers made: answered (any status) or not, and how long it took.
actor Answers {
  var answered = 0
  var unanswered: [String] = []
  var statuses: [Int: Int] = [:]
  var longest = Duration.zero
  func record(_ status: Int?, _ id: String, after elapsed: Duration) {
    longest = max(longest, elapsed)
    if let status {
      answered += 1
      statuses[status, default: 0] += 1
    } else {
      unanswered.append(id)
    }
  }
}

/// Creates card `id` through nginx until it is acknowledged (201) or found made (409, an earlier attempt's
/// reply lost), recording every request's answer in `answers`; a request with no answer within 10 s is
/// recorded as unanswered (the server must answer every one).
func createRecording(_ id: String, into answers: Answers) async throws {
  let body = #"{"id":"\#(id)","title":"Card \#(id)","column":"todo"}"#
  let clock = ContinuousClock()
  while true {
    let start = clock.now
    var status: Int?
    var reply = Data()
    do {
      (status, reply) = try await http("POST", settings.web, "/api/cards", body)
    } catch let error as URLError where error.code == .timedOut {
      status = nil
    } catch {
      // The connection dropped (an instance killed under nginx): an answer of its own kind.
      status = 0
    }
    await answers.record(status, id, after: clock.now - start)
    switch status {
    case 201?:
      await acknowledged.add(id, try JSONDecoder().decode(WriteReply.self, from: reply).version)
      return
    case 409?: return
    case 0?, 502?, 503?, nil: try await Task.sleep(for: .milliseconds(50))
    case let other?:
      throw CheckFailure("POST \(id): \(other) \(String(decoding: reply, as: UTF8.self))")
    }
  }
}

/// Writers and followers through nginx while instances are killed and started again, one started late,
/// and PostgreSQL restarted `settings.scheduleRestarts` times, some right after an instance restart (the
/// order that once wedged every write). Then: every client equals the database, every acknowledged write
/// is in it, every request was answered, no session is left idle in a transaction.
@MainActor
func schedule() async throws {
  let answers = Answers()
  let running = StopFlag()
  let writers = Task {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<3 {
        group.addTask {
          var index = 0
          while await !running.isStopped {
            try await createRecording("s\(writer)-\(index)", into: answers)
            index += 1
          }
        }
      }
      try await group.waitForAll()
    }
  }
  func pause() async throws { try await Task.sleep(for: .milliseconds(700)) }
  var late = false
  for round in 1...settings.scheduleRestarts {
    try await pause()
    if round % 2 == 1 {
      let n = (round / 2) % 3 + 1
      try await cluster("kill", "\(n)")
      try await pause()
      try await cluster("start-instance", "\(n)")
      say("    round \(round): instance \(n) killed and started again")
    }
    if round == 2 {
      // A late instance: down while the log moves on (past a checkpoint), started after.
      try await cluster("kill", "3")
      late = true
      say("    round \(round): instance 3 down")
    }
    try await cluster("restart-postgres")
    say("    round \(round): PostgreSQL restarted")
    if late && round >= 3 {
      try await pause()
      try await cluster("start-instance", "3")
      late = false
      say("    round \(round): instance 3 started late")
    }
  }
  if late { try await cluster("start-instance", "3") }
  try await pause()
  await running.stop()
  try await within(120, "the writers' last requests") { try await writers.value }
  let truth = try await board()
  try await converge(followers, to: truth)
  for n in 1...3 { try await checkInstance(n, equals: truth, acknowledged: acknowledged) }
  let ids = Set(truth.columns.flatMap(\.items).map(\.id))
  let missing = await acknowledged.cards.keys.filter { !ids.contains($0) }
  try require(missing.isEmpty, "acknowledged writes missing from the database: \(missing.sorted())")
  let unanswered = await answers.unanswered
  try require(unanswered.isEmpty, "requests with no answer within 10 s: \(unanswered)")
  let idle = try await psql(
    "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'")
  try require(idle == "0", "\(idle) sessions left idle in a transaction")
  let (answered, statuses, longest) = (await answers.answered, await answers.statuses, await answers.longest)
  let acknowledgedCount = await acknowledged.cards.keys.filter { $0.hasPrefix("s") }.count
  say(
    "    \(settings.scheduleRestarts) PostgreSQL restarts: \(answered) requests, all answered (statuses \(statuses.sorted { $0.key < $1.key }), 0 = a dropped connection), longest answer \(longest); \(acknowledgedCount) writes acknowledged, all in the database; version \(truth.version); no session idle in a transaction"
  )
}

/// A flag the schedule's writers read to stop.
actor StopFlag {
  var isStopped = false
  func stop() { isStopped = true }
}

if let probe = settings.probe {
  let follower = Follower(address: probe)
  await follower.start()
  let remote = follower.remote
  let truth = try await board()
  let reached = try? await within(5, "probe") {
    await remote.reached(remoteVersion: truth.version)
  }
  say("probe reached: \(String(describing: reached))")
  say("probe \(probe): \(await follower.summary), version \(String(describing: await remote.remoteVersion))")
  exit(0)
}

let tests: [(String, @MainActor () async throws -> Void)] = [
  ("kill -9 one instance while clients follow and writers write", killInstance),
  ("restart PostgreSQL", restartPostgres),
  ("a write whose transaction fails makes no version", failedTransaction),
  ("board_commit writes nothing from a version the stream left or for an edit answered", commitGuards),
  ("a write behind a lock held past lock_timeout is made again once, and answered", heldLock),
  (
    "inserts before a card, moves and deletes: the database's rows are every instance's board",
    rowsOfEveryKind
  ),
  ("an instance started late catches up from the log and serves resumes", lateInstance),
  ("a hung instance: every request through nginx is answered within its timeouts", hungInstance),
  ("two users reusing each other's edit ids on several instances", reusedEditIDs),
  (
    "an edit resent to another instance, and to its own after a restart, is answered once",
    answersOnAnyInstance
  ),
  ("the same edit sent to two instances at once, beside other writers", racedResends),
  ("a schedule of instance kills, a late instance and PostgreSQL restarts under writers", schedule),
  ("scoped clients of named views, one stalled, under rolling kills: the oracle", oracleUnderRollingKills),
]
var passed = 0
var failed = 0
for (name, test) in tests where settings.only.map(name.contains) ?? true {
  say("cluster-check: \(name)")
  do {
    try await test()
    passed += 1
    say("  passed")
  } catch {
    failed += 1
    say("  FAILED: \(error)")
  }
}
for follower in followers { await follower.stop() }
say("\(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
