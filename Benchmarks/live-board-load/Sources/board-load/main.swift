// A load run against a running live-board: N WebSocket clients follow the board while W writers edit it by
// HTTP. Every client must end equal to the database; prints p50/p99 delivery latency, batches per client,
// and the server's resident memory. A benchmark program, not a test: `bash Benchmarks/live-board-load/load.sh`.
//
//   board-load --port 8080 [--clients 1000] [--writers 8] [--writes 40] [--server-pid PID]
//              [--replicas checkpoints|every-record] [--attackers N] [--stallers N] [--viewers N]
//
// With --attackers N, N more WebSockets of one user (`mallory`) each subscribe 16 views (format 3) and read
// what they are sent, as a client that opens many connections would: the run then also prints the
// server's resident memory per attacking connection, and the latency printed is still the other clients'
// (compare it with a run without attackers: the control). With --stallers N, N more WebSockets (users
// staller0, staller1, …) subscribe 16 views each and never read: what they cost the writers and the other
// clients is their bounded backlog. Their control is --viewers N: as many users (viewer0, …) with the same
// 16 views each, who read everything (the server projects their views either way).
//
// With --replicas, every other client keeps a durable replica in a SQLite database of its own
// (BoardReplicaStore, through GRDB, each append a committed transaction, flushed at WAL checkpoints or at
// every record): the run then also prints the p50 of the time until a client holds each version (applied
// and journalled) for the clients with a replica and for those without, measured in the same run.

import Foundation
import HummingbirdWSClient
import LiveBoard
import Logging
import SimpleSource

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The run's settings, from the command line.
struct Settings: Sendable {
  var port = 8080
  var clientCount = 1000
  var writerCount = 8
  var writesPerWriter = 40
  var serverPID: Int?
  var replicas: BoardReplicaStore.Sync?
  var attackerCount = 0
  var stallerCount = 0
  var viewerCount = 0

  static func parse() -> Settings {
    var settings = Settings()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
      if argument == "--replicas" {
        settings.replicas = arguments.next() == "every-record" ? .everyRecord : .checkpoints
        continue
      }
      let value = arguments.next().flatMap(Int.init)
      switch argument {
      case "--port": settings.port = value ?? settings.port
      case "--clients": settings.clientCount = value ?? settings.clientCount
      case "--writers": settings.writerCount = value ?? settings.writerCount
      case "--writes": settings.writesPerWriter = value ?? settings.writesPerWriter
      case "--server-pid": settings.serverPID = value
      case "--attackers": settings.attackerCount = value ?? 0
      case "--stallers": settings.stallerCount = value ?? 0
      case "--viewers": settings.viewerCount = value ?? 0
      default:
        print(
          "usage: board-load --port N [--clients N] [--writers N] [--writes N] [--server-pid PID] [--replicas SYNC] [--attackers N] [--stallers N] [--viewers N]"
        )
        exit(2)
      }
    }
    return settings
  }

  var base: String { "http://127.0.0.1:\(port)" }
}

let settings = Settings.parse()
let port = settings.port
let clientCount = settings.clientCount
let writerCount = settings.writerCount
let writesPerWriter = settings.writesPerWriter
let serverPID = settings.serverPID
let clock = ContinuousClock()
let start = clock.now
let base = settings.base

/// What every client saw, and when each write was sent.
actor Tally {
  var started = 0
  var sent: [Int: ContinuousClock.Instant] = [:]
  var arrivals: [Int: [(to: Int, at: ContinuousClock.Instant)]] = [:]
  /// When each client held each version: applied, and journalled when it keeps a replica.
  var held: [Int: [(to: Int, at: ContinuousClock.Instant)]] = [:]
  var failures: [String] = []
  var startWaiters: [(Int, CheckedContinuation<Void, Never>)] = []

  func clientStarted() {
    started += 1
    let ready = startWaiters.filter { $0.0 <= started }
    startWaiters.removeAll { $0.0 <= started }
    for waiter in ready { waiter.1.resume() }
  }

  func waitForStarted(_ count: Int) async {
    if started >= count { return }
    await withCheckedContinuation { startWaiters.append((count, $0)) }
  }

  func wrote(_ version: Int, sentAt: ContinuousClock.Instant) {
    sent[version] = min(sent[version] ?? sentAt, sentAt)
  }
  func arrived(_ client: Int, to: Int, at: ContinuousClock.Instant) {
    arrivals[client, default: []].append((to, at))
  }
  func holds(_ client: Int, to: Int, at: ContinuousClock.Instant) {
    held[client, default: []].append((to, at))
  }
  /// When each client's own subscriber (what an app's view follows) was given each version.
  var shown: [Int: [(to: Int, at: ContinuousClock.Instant)]] = [:]
  func shows(_ client: Int, to: Int, at: ContinuousClock.Instant) {
    shown[client, default: []].append((to, at))
  }
  func failed(_ reason: String) { failures.append(reason) }
}

let tally = Tally()
/// Where the clients' replicas are kept, removed at the end.
let replicaFolder = FileManager.default.temporaryDirectory.appendingPathComponent("board-load-\(UUID())")
if settings.replicas != nil {
  try FileManager.default.createDirectory(at: replicaFolder, withIntermediateDirectories: true)
}

/// One client: follows `/live` into its own RemoteDataSource until it holds `target` (read from `goal`).
actor Goal {
  var target: Int?
  var waiters: [CheckedContinuation<Int, Never>] = []
  func set(_ value: Int) {
    target = value
    for waiter in waiters { waiter.resume(returning: value) }
    waiters = []
  }
  func value() async -> Int {
    if let target { return target }
    return await withCheckedContinuation { waiters.append($0) }
  }
}
let goal = Goal()

func runClient(_ index: Int, settings: Settings, tally: Tally, goal: Goal) async -> RemoteDataSource<Column> {
  let clock = ContinuousClock()
  var logger = Logger(label: "board-load")
  logger.logLevel = .critical
  /// Every other client keeps a replica in a SQLite database of its own, with --replicas.
  var store: BoardReplicaStore?
  if let sync = settings.replicas, index % 2 == 1 {
    do {
      store = try BoardReplicaStore(
        path: replicaFolder.appendingPathComponent("client-\(index).sqlite").path, sync: sync)
    } catch {
      await tally.failed("client \(index): its replica's database: \(error)")
    }
  }
  let remote = RemoteDataSource<Column>(store: store)
  let coder = WireCoder()
  // With --replicas, each client also has a subscriber of its own, as an app's view would: when it is
  // given each version is what the user would see.
  var viewer: Task<Void, Never>?
  if settings.replicas != nil {
    let subscription = await remote.subscribe()
    viewer = Task {
      for await batch in subscription.batches { await tally.shows(index, to: batch.to.number, at: clock.now) }
    }
  }
  defer { viewer?.cancel() }
  do {
    try await WebSocketClient.connect(
      url: "ws://127.0.0.1:\(settings.port)/live", configuration: .init(maxFrameSize: 1 << 22), logger: logger
    ) { inbound, outbound, _ in
      try await outbound.write(
        .text(String(decoding: coder.encode(await remote.subscribeRequest), as: UTF8.self)))
      let watcher = Task {
        let target = await goal.value()
        await remote.reached(remoteVersion: target)
        try await outbound.close(.normalClosure, reason: nil)
      }
      defer { watcher.cancel() }
      var first = true
      for try await message in inbound.messages(maxSize: 1 << 22) {
        guard case .text(let text) = message else { continue }
        let decoded: WireMessage<Column> = try coder.decode(Data(text.utf8))
        if case .batch(let batch) = decoded { await tally.arrived(index, to: batch.to, at: clock.now) }
        try await remote.receive(decoded)
        if case .batch(let batch) = decoded { await tally.holds(index, to: batch.to, at: clock.now) }
        if first {
          first = false
          await tally.clientStarted()
        }
      }
    }
  } catch {
    await tally.failed("client \(index): \(error)")
  }
  return remote
}

/// The 16 views each attacking connection subscribes: searches and windows of the board.
let attackViews: [String: WireQueryRequest?] = Dictionary(
  uniqueKeysWithValues: (0..<8).map {
    ("search\($0)", WireQueryRequest("search", ["text": .string("\($0)")]))
  }
    + (1...8).map { ("top\($0)", WireQueryRequest("top", ["limit": .integer($0)])) })

/// How many attacking connections received their views.
actor AttackTally {
  var started = 0
  /// The attacking connections that received their first message.
  var received: Set<Int> = []
  /// Attacking connections the server closed before their first message (a limit per user or address).
  var refused = 0
  var failures: [String] = []
  var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
  /// Attacker `index` received its first message.
  func attackerStarted(_ index: Int) {
    received.insert(index)
    count()
  }
  /// Attacker `index`'s connection ended: refused, when it received nothing.
  func attackerEnded(_ index: Int) {
    guard !received.contains(index) else { return }
    refused += 1
    received.insert(index)
    count()
  }
  private func count() {
    started += 1
    waiters.removeAll { count, waiter in
      guard started >= count else { return false }
      waiter.resume()
      return true
    }
  }
  func failed(_ failure: String) { failures.append(failure) }
  func waitForStarted(_ count: Int) async {
    if started >= count { return }
    await withCheckedContinuation { waiters.append((count, $0)) }
  }
}
let attackTally = AttackTally()

/// One attacking connection: user `mallory`, 16 views, every message read and dropped, closed once the
/// writes are done; or closed by the server before its first message (refused).
func runAttacker(_ index: Int, settings: Settings) async {
  var logger = Logger(label: "board-load")
  logger.logLevel = .critical
  let request = WireMessage<Column>.subscribeViews(attackViews)
  do {
    try await WebSocketClient.connect(
      url: "ws://127.0.0.1:\(settings.port)/live?user=mallory", configuration: .init(maxFrameSize: 1 << 22),
      logger: logger
    ) { inbound, outbound, _ in
      try await outbound.write(.text(String(decoding: WireCoder().encode(request), as: UTF8.self)))
      let closer = Task {
        _ = await goal.value()
        try await outbound.close(.normalClosure, reason: nil)
      }
      defer { closer.cancel() }
      var first = true
      for try await message in inbound.messages(maxSize: 1 << 22) {
        guard first, case .text(let text) = message else { continue }
        first = false
        if text.contains(#""type":"error""#) { await attackTally.failed("attacker \(index): \(text)") }
        await attackTally.attackerStarted(index)
      }
    }
  } catch {
    // Before its first message, the server refused it (counted below); after it, a failure.
    if await attackTally.received.contains(index) { await attackTally.failed("attacker \(index): \(error)") }
  }
  await attackTally.attackerEnded(index)
}

/// One connection of user `user` that subscribes 16 views, then reads everything it is sent (`reads`) or
/// nothing, until the writes are done.
func runViews(user: String, reads: Bool, settings: Settings) async {
  var logger = Logger(label: "board-load")
  logger.logLevel = .critical
  let request = WireMessage<Column>.subscribeViews(attackViews)
  // A client that could not connect or was closed has nothing to report: the writers' figures tell.
  _ = try? await WebSocketClient.connect(
    url: "ws://127.0.0.1:\(settings.port)/live?user=\(user)",
    configuration: .init(maxFrameSize: 1 << 22),
    logger: logger
  ) { inbound, outbound, _ in
    try await outbound.write(.text(String(decoding: WireCoder().encode(request), as: UTF8.self)))
    guard reads else {
      _ = await goal.value()
      try await outbound.close(.normalClosure, reason: nil)
      return
    }
    let closer = Task {
      _ = await goal.value()
      try await outbound.close(.normalClosure, reason: nil)
    }
    defer { closer.cancel() }
    for try await _ in inbound.messages(maxSize: 1 << 22) {}
  }
}

struct Reply: Decodable { var version: Int }

/// The writers' HTTP session: a connection per writer (URLSession's default is 6 per host), so that every
/// writer's request is in flight at once and the server sees them arrive together.
let writerSession: URLSession = {
  let configuration = URLSessionConfiguration.default
  configuration.httpMaximumConnectionsPerHost = max(6, writerCount)
  return URLSession(configuration: configuration)
}()

func request(_ method: String, _ path: String, _ body: String?, settings: Settings, tally: Tally) async throws
  -> Int
{
  let clock = ContinuousClock()
  var request = URLRequest(url: URL(string: settings.base + path)!)
  request.httpMethod = method
  request.setValue("application/json", forHTTPHeaderField: "content-type")
  request.httpBody = body.map { Data($0.utf8) }
  let sentAt = clock.now
  let (data, response) = try await writerSession.data(for: request)
  let status = (response as? HTTPURLResponse)?.statusCode ?? 0
  guard (200..<300).contains(status) else {
    throw NSError(
      domain: "board-load", code: status,
      userInfo: [NSLocalizedDescriptionKey: String(decoding: data, as: UTF8.self)])
  }
  let version = try JSONDecoder().decode(Reply.self, from: data).version
  await tally.wrote(version, sentAt: sentAt)
  return version
}

/// One writer: creates, renames, moves and deletes cards of its own. A request the server refuses (a 503
/// under overload, say) is counted as a failure, and the writer goes on with its next write.
func runWriter(_ writer: Int, settings: Settings, tally: Tally) async throws -> Int {
  func request(_ method: String, _ path: String, _ body: String?) async throws -> Int {
    do {
      return try await board_load.request(method, path, body, settings: settings, tally: tally)
    } catch {
      await tally.failed("writer \(writer): \(method) \(path): \(error.localizedDescription)")
      throw error
    }
  }
  var generator = SystemRandomNumberGenerator()
  var mine: [String] = []
  var last = 0
  for step in 0..<settings.writesPerWriter {
    let columns = ["todo", "doing", "done"]
    let column = columns.randomElement(using: &generator)!
    switch mine.isEmpty ? 0 : Int.random(in: 0..<4, using: &generator) {
    case 0:
      let id = "w\(writer)-\(step)"
      guard
        let made = try? await request(
          "POST", "/api/cards", #"{"id":"\#(id)","title":"Card \#(id)","column":"\#(column)"}"#)
      else { continue }
      last = made
      mine.append(id)
    case 1:
      last =
        (try? await request("PATCH", "/api/cards/\(mine.randomElement()!)", #"{"title":"Edited \#(step)"}"#))
        ?? last
    case 2:
      last =
        (try? await request("POST", "/api/cards/\(mine.randomElement()!)/move", #"{"column":"\#(column)"}"#))
        ?? last
    default:
      let id = mine.remove(at: Int.random(in: 0..<mine.count, using: &generator))
      last = (try? await request("DELETE", "/api/cards/\(id)", nil)) ?? last
    }
  }
  return last
}

func residentBytes(_ pid: Int) -> Int? {
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
  for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
    return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
  }
  return nil
}

/// CPU seconds (user + system) a process has used, from /proc.
func cpuSeconds(_ pid: Int) -> Double? {
  guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = stat.lastIndex(of: ")")
  else { return nil }
  let fields = stat[stat.index(after: close)...].split(separator: " ")
  guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
  return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

let rssBefore = serverPID.flatMap(residentBytes)
let serverCPUBefore = serverPID.flatMap(cpuSeconds)
let clients = Task {
  await withTaskGroup(of: RemoteDataSource<Column>.self) { group in
    for index in 0..<clientCount {
      group.addTask { await runClient(index, settings: settings, tally: tally, goal: goal) }
    }
    var remotes: [RemoteDataSource<Column>] = []
    for await remote in group { remotes.append(remote) }
    return remotes
  }
}
await tally.waitForStarted(clientCount)
let connected = clock.now - start
let rssClients = serverPID.flatMap(residentBytes)
let attackers = Task {
  await withTaskGroup(of: Void.self) { group in
    for index in 0..<settings.attackerCount { group.addTask { await runAttacker(index, settings: settings) } }
  }
}
await attackTally.waitForStarted(settings.attackerCount)
let stallers = Task {
  await withTaskGroup(of: Void.self) { group in
    for index in 0..<settings.stallerCount {
      group.addTask { await runViews(user: "staller\(index)", reads: false, settings: settings) }
    }
    for index in 0..<settings.viewerCount {
      group.addTask { await runViews(user: "viewer\(index)", reads: true, settings: settings) }
    }
  }
}
let rssAttacked = serverPID.flatMap(residentBytes)
let writeStart = clock.now
let finalVersions = try await withThrowingTaskGroup(of: Int.self) { group in
  for writer in 0..<writerCount {
    group.addTask { try await runWriter(writer, settings: settings, tally: tally) }
  }
  var versions: [Int] = []
  for try await version in group { versions.append(version) }
  return versions
}
/// How long the writers took, alone: what clients that never read must not slow.
let writersTook = clock.now - writeStart
let rssPeak = serverPID.flatMap(residentBytes)
let serverCPU = serverPID.flatMap(cpuSeconds).map { $0 - (serverCPUBefore ?? 0) }
let (truthData, _) = try await URLSession.shared.data(from: URL(string: base + "/api/board")!)
struct Truth: Decodable {
  var version: Int
  var columns: [Column]
}
let truth = try JSONDecoder().decode(Truth.self, from: truthData)
await goal.set(max(truth.version, finalVersions.max() ?? 0))
let remotes = await clients.value
await attackers.value
await stallers.value
let elapsed = clock.now - writeStart

var equal = 0
for remote in remotes where await remote.snapshot.sections == truth.columns { equal += 1 }
let sent = await tally.sent
var latencies: [Duration] = []
var batchCounts: [Int] = []
let arrivals = await tally.arrivals
for client in 0..<clientCount {
  let list = arrivals[client] ?? []
  batchCounts.append(list.count)
  for (version, sentAt) in sent {
    if let arrival = list.first(where: { $0.to >= version }) { latencies.append(arrival.at - sentAt) }
  }
}
latencies.sort()
/// The time until each client of a group held each version written, sorted.
func heldLatencies(_ clients: some Sequence<Int>, _ held: [Int: [(to: Int, at: ContinuousClock.Instant)]])
  -> [Duration]
{
  var latencies: [Duration] = []
  for client in clients {
    let list = held[client] ?? []
    for (version, sentAt) in sent {
      if let arrival = list.first(where: { $0.to >= version }) { latencies.append(arrival.at - sentAt) }
    }
  }
  return latencies.sorted()
}
let held = await tally.held
let heldOn = heldLatencies(stride(from: 1, to: clientCount, by: 2), held)
let heldOff = heldLatencies(stride(from: 0, to: clientCount, by: 2), held)
let shown = await tally.shown
let shownOn = heldLatencies(stride(from: 1, to: clientCount, by: 2), shown)
let shownOff = heldLatencies(stride(from: 0, to: clientCount, by: 2), shown)
func percentile(_ p: Double, of latencies: [Duration]) -> Double {
  guard !latencies.isEmpty else { return .nan }
  let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
  return Double(value.components.seconds) * 1000 + Double(value.components.attoseconds) / 1e15
}
let failures = await tally.failures + attackTally.failures
let writes = writerCount * writesPerWriter
let meanBatches = batchCounts.isEmpty ? 0 : Double(batchCounts.reduce(0, +)) / Double(batchCounts.count)
print(
  "board-load: \(clientCount) clients connected in \(connected); \(writerCount) writers made \(writes) writes in \(elapsed)"
)
print("  clients equal to the database: \(equal) of \(clientCount); failures: \(failures.count)")
print(
  "  delivery latency p50 \(String(format: "%.1f", percentile(0.5, of: latencies))) ms, p99 \(String(format: "%.1f", percentile(0.99, of: latencies))) ms over \(latencies.count) deliveries"
)
print(
  "  batches per client: mean \(String(format: "%.1f", meanBatches)), min \(batchCounts.min() ?? 0), max \(batchCounts.max() ?? 0) (for \(writes) writes: coalesced)"
)
let ownCPU = cpuSeconds(Int(getpid())) ?? 0
print(
  "  CPU: the server \(String(format: "%.1f", serverCPU ?? .nan)) s, this load generator (all clients) \(String(format: "%.1f", ownCPU)) s, on 2 cores"
)
if let rssBefore, let rssPeak {
  print(
    "  server resident memory: \(rssBefore / 1_048_576) MiB before the clients, \(rssPeak / 1_048_576) MiB with them after the writes"
  )
}
var attackPerConnection = 0
if settings.attackerCount > 0, let rssClients, let rssAttacked {
  let refused = await attackTally.refused
  // Per connection the server kept (those refused as they opened hold nothing).
  attackPerConnection = (rssAttacked - rssClients) / max(1, settings.attackerCount - refused)
  print(
    "  attack: \(settings.attackerCount) connections of one user x \(attackViews.count) views (\(refused) refused as they opened): server resident memory \(rssClients / 1_048_576) -> \(rssAttacked / 1_048_576) MiB, \(attackPerConnection / 1024) KiB per attacking connection kept; the latency above is the other clients'"
  )
}
print(
  #"{"clients":\#(clientCount),"attackers":\#(settings.attackerCount),"rss_per_attacker_bytes":\#(attackPerConnection),"attackers_refused":\#(await attackTally.refused),"stallers":\#(settings.stallerCount),"viewers":\#(settings.viewerCount),"writers_ms":\#(Double(writersTook.components.seconds) * 1000 + Double(writersTook.components.attoseconds) / 1e15),"writers":\#(writerCount),"writes":\#(writes),"equal":\#(equal),"failures":\#(failures.count),"p50_ms":\#(percentile(0.5, of: latencies)),"p99_ms":\#(percentile(0.99, of: latencies)),"batches_per_client":\#(meanBatches),"server_rss_bytes":\#(rssPeak ?? 0)}"#
)
if let sync = settings.replicas {
  let (on, off) = (percentile(0.5, of: heldOn), percentile(0.5, of: heldOff))
  var replicaBytes = 0
  for file in (try? FileManager.default.contentsOfDirectory(atPath: replicaFolder.path)) ?? [] {
    let attributes = try? FileManager.default.attributesOfItem(
      atPath: replicaFolder.appendingPathComponent(file).path)
    replicaBytes += (attributes?[.size] as? Int) ?? 0
  }
  print(
    "  held (applied, and journalled with a replica): p50 \(String(format: "%.1f", on)) ms for the \(clientCount / 2) clients with a SQLite replica (sync \(sync)), \(String(format: "%.1f", off)) ms without (same run): \(String(format: "%.2f", on / off))x; replicas on disk \(replicaBytes / 1024) KiB"
  )
  let (shownP50On, shownP50Off) = (percentile(0.5, of: shownOn), percentile(0.5, of: shownOff))
  print(
    "  shown (given to the client's own subscriber): p50 \(String(format: "%.1f", shownP50On)) ms with a replica, \(String(format: "%.1f", shownP50Off)) ms without (same run): \(String(format: "%.2f", shownP50On / shownP50Off))x"
  )
  print(
    #"{"p50_ms_replicas_on":\#(on),"p50_ms_replicas_off":\#(off),"replicas_vs_off":\#(on / off),"p50_ms_shown_replicas_on":\#(shownP50On),"p50_ms_shown_replicas_off":\#(shownP50Off),"shown_replicas_vs_off":\#(shownP50On / shownP50Off),"replica_bytes":\#(replicaBytes)}"#
  )
  try? FileManager.default.removeItem(at: replicaFolder)
}
for failure in failures.prefix(5) { print("  \(failure)") }
exit(equal == clientCount && failures.isEmpty ? 0 : 1)
