// The board on PostgreSQL, shared by several instances: every group of writes commits its rows and one log
// entry in one transaction; every instance follows the log into its own source, so versions are the same
// everywhere and a client resumes on any instance.

import Foundation
import Logging
import NIOConcurrencyHelpers
import LiveBoard
import PostgresNIO
import SimpleSource

/// Where the PostgreSQL server is.
public struct PostgresSettings: Sendable {
  /// The server's host.
  public var host = "127.0.0.1"
  /// The server's port.
  public var port = 5432
  /// The user to connect as.
  public var user = "postgres"
  /// The user's password, if the server asks for one.
  public var password: String? = nil
  /// The database holding the board.
  public var database = "board"
  /// How long a write may take, from leasing a connection to its commit: past it the client is answered
  /// 503 (`busy` when nothing was committed, `unknownOutcome` when `COMMIT` was sent and not answered),
  /// the connection is closed and what the write prepared is abandoned.
  public var writeDeadline = Duration.seconds(5)
  /// How long every log entry is kept at least, whatever the checkpoints: an instance whose source lags less
  /// than this behind the log always catches up in place (one that lags more logs why and must be started
  /// again, from a checkpoint).
  public var logRetention = Duration.seconds(60)
  /// The longest a statement runs on the server, in milliseconds (`statement_timeout`, set on every
  /// session of the board); below ``writeDeadline``.
  public var statementTimeout = 3_000
  /// The longest a statement waits for a lock, in milliseconds (`lock_timeout`): shorter than
  /// ``statementTimeout``, so that a wait for a lock is refused as one (and a group made again once).
  public var lockTimeout = 2_000
  /// The longest a transaction may sit idle before PostgreSQL ends its session and releases its locks, in
  /// milliseconds (`idle_in_transaction_session_timeout`): a client that stops mid-transaction never holds
  /// the stream's row lock longer.
  public var idleInTransactionTimeout = 4_000
  /// How many versions' edits keep their answers (table `edit_answer`, written in each edit's transaction
  /// and pruned at checkpoints): a WebSocket edit sent again to any instance gets its first answer when it
  /// was made at one of the newest `answerRetention` versions.
  public var answerRetention = 10_000

  /// The defaults: user `postgres`, database `board` on 127.0.0.1:5432.
  public init() {}

  /// The bounds above, as the startup parameters of every connection.
  var startupParameters: [(String, String)] {
    [
      ("statement_timeout", "\(statementTimeout)"), ("lock_timeout", "\(lockTimeout)"),
      ("idle_in_transaction_session_timeout", "\(idleInTransactionTimeout)"),
      ("application_name", "live-board"),
    ]
  }

  var configuration: PostgresClient.Configuration {
    var configuration = PostgresClient.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: .disable)
    configuration.options.additionalStartupParameters = startupParameters
    // A connection that idles is checked every 5 s, so one PostgreSQL dropped is noticed before it is used.
    configuration.options.keepAliveBehavior = .init(frequency: .seconds(5))
    return configuration
  }

  var connectionConfiguration: PostgresConnection.Configuration {
    var configuration = PostgresConnection.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: .disable)
    configuration.options.additionalStartupParameters = startupParameters
    return configuration
  }
}

/// The board kept in PostgreSQL, for one of several instances of the service.
///
/// **The log.** Tables `card` (the rows), `board_stream` (the stream's name and newest version),
/// `board_log` (one entry per version: the wire batch that made it) and `board_checkpoint` (the whole
/// board at a version, every ``checkpointInterval`` versions; two are kept). A group of writes (those that
/// arrived here while the group before it committed, ``write(_:)``) is planned in order against the version
/// this instance holds and prepared in the source as one write (its batch derived, nothing made); then one
/// statement (``commitFunction``), its own transaction, takes the stream's row lock and, when the stream is
/// still at that version, records the edits' answers, writes the rows, the log entry and the new version
/// with the `NOTIFY`; only then is the prepared write applied. When the stream had moved, nothing was
/// written, and the group takes the locked path: `BEGIN`, the row lock (`SELECT … FOR UPDATE`) with the log
/// after the version held, which the source makes first, the plan against the newest version, the same
/// writes (``writeRowsFunction``) and `COMMIT`. A transaction that fails is abandoned: no instance ever
/// shows its version.
///
/// **Following.** Each instance listens on the `board_log` channel; a notification is a ``Doorbell``: the
/// stream and version, and the log entry when it fits in a notification. On each for the version right
/// after the one it holds, it makes the doorbell's entry in its source (``BasicDataSource/apply(logged:)``,
/// checked as any entry); for a later one, one without its entry, and on every reconnection to PostgreSQL,
/// it reads the entries after the version it holds and makes them. Its own writes' versions it holds
/// already. An instance starts from the older checkpoint and replays the log from there, so it retains the
/// versions a client may resume from.
///
/// **Bounded.** At each checkpoint the log is pruned up to the older kept checkpoint: it holds between one
/// and two intervals of versions. The cut is a prefix by version (never a hole among the versions kept),
/// and a catch-up checks that every entry it reads starts where the one before it ended. A client holding
/// an older version resets.
public actor ClusterBoard: BoardStore {
  /// Versions between checkpoints; the log keeps one to two intervals.
  public nonisolated let checkpointInterval: Int
  /// The live board, at the log's versions.
  public nonisolated let source: BasicDataSource<Column>
  /// The stream's name: made once, when the database was set up, and the same on every instance.
  public nonisolated let stream: String
  /// Enough for every version the log holds.
  public nonisolated let history: HistoryLimit
  /// How many versions' edits keep their answers; see ``PostgresSettings/answerRetention``.
  public nonisolated var answerRetention: Int { settings.answerRetention }
  let client: PostgresClient
  let settings: PostgresSettings
  let logger: Logger
  /// Runs the client's connection pool.
  let clientTask: Task<Void, Never>
  /// Whether a catch-up is running, and who waits for the next one.
  var catchingUp = false
  var catchUpWaiters: [CheckedContinuation<Void, Never>] = []
  var catchUpAgain = false
  /// Whether writes that arrive together share a transaction.
  public nonisolated let commits: CommitMode
  /// The writes waiting for the next group, and whether a group is being committed.
  var queued: [Queued] = []
  var isCommitting = false
  /// The listener's task, and the task that reads the log every second whatever the listener hears.
  var listening: Task<Void, Never>?
  var polling: Task<Void, Never>?

  /// Connects, sets the database up when it is new, loads the board from the older checkpoint and replays
  /// the log, then follows it.
  /// - Parameters:
  ///   - checkpointInterval: Versions between checkpoints.
  ///   - commits: Whether writes that arrive together share a transaction (``CommitMode/group``), or each
  ///     has its own.
  public static func open(
    _ settings: PostgresSettings, checkpointInterval: Int = 500, commits: CommitMode = .group,
    logger: Logger = Logger(label: "live-board")
  ) async throws -> ClusterBoard {
    let client = PostgresClient(configuration: settings.configuration, backgroundLogger: logger)
    let clientTask = Task { await client.run() }
    do {
      // Set up and load on a connection of its own: the pool is first leased from long after run() began.
      let connection = try await PostgresConnection.connect(
        configuration: settings.connectionConfiguration, id: 0, logger: logger)
      let stream: String
      let (version, columns, entries): (Int, [Column], [WireBatch<Column>])
      do {
        stream = try await setUp(connection, logger: logger)
        (version, columns, entries) = try await loadStart(connection, logger: logger)
        try? await connection.close()
      } catch {
        try? await connection.close()
        throw error
      }
      let board = try ClusterBoard(
        client: client, clientTask: clientTask, settings: settings, stream: stream, version: version,
        columns: columns, checkpointInterval: checkpointInterval, commits: commits, logger: logger)
      for entry in entries { try await board.make(entry) }
      await board.startListening()
      return board
    } catch {
      clientTask.cancel()
      throw error
    }
  }

  init(
    client: PostgresClient, clientTask: Task<Void, Never>, settings: PostgresSettings, stream: String,
    version: Int, columns: [Column], checkpointInterval: Int, commits: CommitMode, logger: Logger
  ) throws {
    self.commits = commits
    self.client = client
    self.clientTask = clientTask
    self.settings = settings
    self.stream = stream
    self.logger = logger
    self.checkpointInterval = checkpointInterval
    history = HistoryLimit(versions: 2 * checkpointInterval + 64)
    source = try BasicDataSource(sections: columns, version: version, history: history)
  }

  /// Stops following the log and closes the connections.
  public func close() {
    listening?.cancel()
    polling?.cancel()
    clientTask.cancel()
  }

  // MARK: - Setting up and loading

  /// Creates the tables, the stream and checkpoint 0 when they do not exist; one instance at a time.
  /// - Returns: The stream's name.
  static func setUp(_ connection: PostgresConnection, logger: Logger) async throws -> String {
    try await connection.query("BEGIN", logger: logger)
    do {
      let name = try await setUpLocked(connection, logger: logger)
      try await connection.query("COMMIT", logger: logger)
      return name
    } catch {
      _ = try? await connection.query("ROLLBACK", logger: logger)
      throw error
    }
  }

  /// The body of ``setUp(_:logger:)``, in its transaction.
  static func setUpLocked(_ connection: PostgresConnection, logger: Logger) async throws -> String {
    do {
      try await connection.query("SELECT pg_advisory_xact_lock(7474)", logger: logger)
      try await connection.query(
        """
        CREATE TABLE IF NOT EXISTS card (
          id TEXT PRIMARY KEY, title TEXT NOT NULL, owner TEXT, columnid TEXT NOT NULL,
          position INTEGER NOT NULL)
        """, logger: logger)
      try await connection.query(
        "CREATE TABLE IF NOT EXISTS board_stream (name TEXT PRIMARY KEY, version BIGINT NOT NULL)",
        logger: logger)
      try await connection.query(
        """
        CREATE TABLE IF NOT EXISTS board_log (
          stream TEXT NOT NULL, version BIGINT NOT NULL, batch TEXT NOT NULL,
          made_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (stream, version))
        """, logger: logger)
      // When each entry was made (the log keeps every entry of the last `logRetention` seconds): a log made
      // before that column gets it. Asked first, so that an instance starting under load takes no lock on
      // the log (ALTER TABLE would wait for every writer).
      let columns = try await connection.query(
        """
        SELECT count(*) FROM information_schema.columns WHERE table_name = 'board_log' AND column_name = 'made_at'
        """, logger: logger
      ).collect()
      if try columns.first?.decode(Int.self) == 0 {
        try await connection.query(
          "ALTER TABLE board_log ADD COLUMN made_at TIMESTAMPTZ NOT NULL DEFAULT now()", logger: logger)
      }
      try await connection.query(
        """
        CREATE TABLE IF NOT EXISTS edit_answer (
          scope TEXT NOT NULL, id TEXT NOT NULL, version BIGINT NOT NULL, fingerprint TEXT,
          PRIMARY KEY (scope, id))
        """, logger: logger)
      // Answers recorded before fingerprints were kept have none, and are trusted.
      try await connection.query(
        "ALTER TABLE edit_answer ADD COLUMN IF NOT EXISTS fingerprint TEXT", logger: logger)
      try await connection.query(
        "CREATE INDEX IF NOT EXISTS edit_answer_version ON edit_answer (version)", logger: logger)
      try await connection.query(writeRowsFunction, logger: logger)
      try await connection.query(commitFunction, logger: logger)
      try await connection.query(
        """
        CREATE TABLE IF NOT EXISTS board_checkpoint (
          stream TEXT NOT NULL, version BIGINT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (stream, version))
        """, logger: logger)
      for try await name in try await connection.query("SELECT name FROM board_stream", logger: logger)
        .decode(String.self)
      {
        return name
      }
      let name = "board-" + UUID().uuidString.prefix(8).lowercased()
      try await connection.query(
        "INSERT INTO board_stream (name, version) VALUES (\(name), 0)", logger: logger)
      let empty = Board.columns.map { Column(id: $0.id, header: $0.title, items: []) }
      let state = try Self.encodeCheckpoint(empty, stream: name, version: 0)
      try await connection.query(
        "INSERT INTO board_checkpoint (stream, version, state) VALUES (\(name), 0, \(state))", logger: logger)
      return name
    }
  }

  /// The older kept checkpoint and every log entry after it, read in one snapshot of the database.
  static func loadStart(_ connection: PostgresConnection, logger: Logger) async throws -> (
    version: Int, columns: [Column], entries: [WireBatch<Column>]
  ) {
    do {
      try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger)
      do {
        let rows = try await connection.query(
          "SELECT version, state FROM board_checkpoint ORDER BY version LIMIT 1", logger: logger
        ).collect()
        guard let row = rows.first else { throw BoardSetupError("no checkpoint in the database") }
        let (version, state) = try row.decode((Int, String).self)
        let columns = try decodeCheckpoint(state)
        let entries = try await readLog(after: version, on: connection, logger: logger)
        try await connection.query("COMMIT", logger: logger)
        return (version, columns, entries)
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        throw error
      }
    }
  }

  /// The log's entries after `version`, in order.
  static func readLog(after version: Int, on connection: PostgresConnection, logger: Logger) async throws
    -> [WireBatch<Column>]
  {
    var entries: [WireBatch<Column>] = []
    let rows = try await connection.query(
      "SELECT version, batch FROM board_log WHERE version > \(version) ORDER BY version", logger: logger)
    for try await (_, text) in rows.decode((Int, String).self) {
      entries.append(try decodeEntry(text))
    }
    return entries
  }

  /// A log entry as `board_log` keeps it: a wire batch's JSON.
  static func decodeEntry(_ text: String) throws -> WireBatch<Column> {
    guard case .batch(let batch) = try WireCoder().decode(Data(text.utf8), as: Column.self) else {
      throw BoardSetupError("a log entry that is not a batch")
    }
    return batch
  }

  static func encodeCheckpoint(_ columns: [Column], stream: String, version: Int) throws -> String {
    let message = WireMessage<Column>.reset(stream: stream, version: version, snapshot: try Snapshot(columns))
    return String(decoding: WireCoder().encode(message), as: UTF8.self)
  }

  static func decodeCheckpoint(_ text: String) throws -> [Column] {
    guard case .reset(_, _, let snapshot) = try WireCoder().decode(Data(text.utf8), as: Column.self) else {
      throw BoardSetupError("a checkpoint that is not a reset")
    }
    return snapshot.sections
  }

  // MARK: - Following the log

  /// Makes one log entry in the source; an entry it has already is skipped.
  func make(_ entry: WireBatch<Column>) async throws {
    try await source.apply(logged: entry)
  }

  /// Listens for the log's doorbell on a connection of its own, following each notification
  /// (``follow(_:)``) and catching up after every (re)connection; reconnects after a pause when PostgreSQL
  /// goes away.
  func startListening() {
    let settings = settings
    let logger = logger
    listening = Task { [weak self] in
      var attempt = 0
      while !Task.isCancelled {
        do {
          let connection = try await PostgresConnection.connect(
            configuration: settings.connectionConfiguration, id: 1, logger: logger)
          attempt = 0
          defer { Task { try? await connection.close() } }
          try await connection.listen(on: "board_log") { notifications in
            // Listening now: what was written while no one listened is in the log.
            try await self?.catchUp()
            for try await notification in notifications {
              guard let self else { return }
              try await self.follow(Doorbell(notification.payload, stream: self.stream))
            }
          }
        } catch {
          if Task.isCancelled { return }
          logger.warning("live-board: following the log: \(Self.describe(error)); reconnecting")
        }
        attempt += 1
        try? await Task.sleep(for: .milliseconds(min(2_000, 100 * attempt)))
      }
    }
    // A doorbell lost with a connection that died silently is not waited for: every second the log is
    // read again (one indexed query when nothing is new), so the source lags the log by a second at most.
    polling = Task { [weak self] in
      while !Task.isCancelled {
        do { try await Task.sleep(for: .seconds(1)) } catch { return }
        do {
          try await self?.catchUp()
        } catch {
          logger.warning("live-board: reading the log: \(Self.describe(error))")
        }
      }
    }
  }

  /// Follows one doorbell (`nil`: a notification that is not one): a version this instance holds (its own
  /// write's, applied after its commit) is not read again; the version right after the one held is made
  /// from the doorbell's entry when it carries one; anything else, or an entry the source refuses, reads
  /// the log.
  func follow(_ doorbell: Doorbell?) async throws {
    switch Doorbell.step(on: doorbell, held: await source.version.number) {
    case .skip:
      return
    case .make(let entry):
      do {
        try await make(entry)
        return
      } catch {
        // A catch-up made versions meanwhile, or the entry does not apply: the log decides.
        try await catchUp()
      }
    case .readLog:
      try await catchUp()
    }
  }

  /// Reads the log once when the source is behind `version`; see ``BoardStore/reach(_:)``.
  public func reach(_ version: Int) async {
    guard await source.version.number < version else { return }
    do {
      try await catchUp()
    } catch {
      logger.warning("live-board: reading the log for a client at \(version): \(Self.describe(error))")
    }
  }

  /// Reads the log after the version held and makes every entry; one catch-up at a time, and a call made
  /// while one runs is served by a run that starts after it.
  func catchUp() async throws {
    if catchingUp {
      catchUpAgain = true
      await withCheckedContinuation { catchUpWaiters.append($0) }
      return
    }
    catchingUp = true
    defer {
      catchingUp = false
      for waiter in catchUpWaiters { waiter.resume() }
      catchUpWaiters = []
    }
    repeat {
      catchUpAgain = false
      let held = await source.version.number
      // Bounded like a write: a read stuck on a connection PostgreSQL dropped is closed and retried.
      let entries = try await withDeadline(settings.writeDeadline, logger: logger) { race in
        do {
          return .success(
            try await self.client.withConnection { connection in
              guard race.withLockedValue({ $0.attach(connection) }) else { throw CancellationError() }
              return try await Self.readLog(after: held, on: connection, logger: self.logger)
            })
        } catch {
          return .failure(Self.failure(error, logger: self.logger))
        }
      }.get()
      if let first = entries.first, first.from > held {
        // The log was pruned past what this instance holds: it cannot catch up in place.
        throw BoardSetupError(
          "the log starts at \(first.from), this instance holds \(held): restart it to load a checkpoint")
      }
      // The whole range read, not only its start: each entry starts where the one before it ended.
      for (earlier, later) in zip(entries, entries.dropFirst()) where later.from != earlier.to {
        throw BoardSetupError(
          "the log has a gap between versions \(earlier.to) and \(later.from): restart to load a checkpoint")
      }
      for entry in entries { try await make(entry) }
    } while catchUpAgain
  }

  // MARK: - Reading

  /// The board as PostgreSQL holds it, with its version, read in one snapshot; see ``BoardStore``.
  public func read(visibleTo user: String?? = .none) async throws(BoardError) -> (
    version: Int, columns: [Column]
  ) {
    let logger = logger
    let board: (Int, [Column])
    do {
      board = try await client.withConnection {
        (connection: PostgresConnection) async throws -> (Int, [Column]) in
        try await Self.readBoard(on: connection, logger: logger)
      }
    } catch {
      throw Self.failure(error, logger: logger)
    }
    guard case .some(let user) = user else { return board }
    return (board.0, Board.visible(board.1, to: user))
  }

  /// The newest version and every card, read in one snapshot of the database.
  static func readBoard(on connection: PostgresConnection, logger: Logger) async throws -> (Int, [Column]) {
    try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
    do {
      let version = try await newestVersion(on: connection, logger: logger)
      var cards: [String: [Card]] = [:]
      let rows: [PostgresRow] = try await connection.query(
        "SELECT id, title, owner, columnid FROM card ORDER BY columnid, position", logger: logger
      ).collect()
      for row in rows {
        let (id, title, owner, column): (String, String, String?, String) = try row.decode(
          (String, String, String?, String).self)
        cards[column, default: []].append(Card(id: id, title: title, owner: owner))
      }
      try await connection.query("COMMIT", logger: logger)
      let columns: [Column] = Board.columns.map {
        Column(id: $0.id, header: $0.title, items: cards[$0.id] ?? [])
      }
      return (version, columns)
    } catch {
      _ = try? await connection.query("ROLLBACK", logger: logger)
      throw error
    }
  }

  /// Takes the stream's row lock for the transaction, and reads its newest version and the log's entries
  /// after `version`, in one statement.
  ///
  /// A statement that waited for the lock read the log as it was when it began, before the transaction it
  /// waited for committed: the entries that transaction wrote are then read in a second statement, so the
  /// entries returned always reach the version returned.
  static func lockStream(after version: Int, on connection: PostgresConnection, logger: Logger) async throws
    -> (head: Int, entries: [WireBatch<Column>])
  {
    var head: Int?
    var entries: [WireBatch<Column>] = []
    let rows = try await connection.query(
      """
      SELECT stream.version, log.batch FROM board_stream AS stream
      LEFT JOIN board_log AS log ON log.version > \(version)
      ORDER BY log.version FOR UPDATE OF stream
      """, logger: logger)
    for try await (newest, text) in rows.decode((Int, String?).self) {
      head = newest
      if let text { entries.append(try decodeEntry(text)) }
    }
    guard let head else { throw BoardSetupError("no stream in the database") }
    let reached = entries.last?.to ?? version
    if reached < head {
      entries += try await readLog(after: reached, on: connection, logger: logger)
    }
    return (head, entries)
  }

  /// The stream's newest version.
  static func newestVersion(on connection: PostgresConnection, logger: Logger) async throws -> Int {
    let rows: [PostgresRow] = try await connection.query("SELECT version FROM board_stream", logger: logger)
      .collect()
    guard let row = rows.first else { throw BoardSetupError("no stream in the database") }
    return try row.decode(Int.self)
  }

  // MARK: - Writes

  /// Makes `write`; see ``BoardStore/write(_:)``. With ``CommitMode/group`` (the default), the writes that
  /// arrive at this instance while a group commits form the next group: one PostgreSQL transaction under
  /// the stream's row lock, one log entry and one version, each write answered on its own (a refused one
  /// refuses nothing else). With ``CommitMode/perEdit``, each write is a transaction of its own, made at
  /// once (the transactions contend for the stream's row lock).
  ///
  /// A write with a ticket is made once, on every instance: the table of answers decides, in the write's
  /// own transaction under the stream's lock. A ticket whose answer is recorded already, or whose edit is
  /// too old to tell (see ``EditTicket/answerMayBeDropped(newest:retention:)``), is refused 503 `busy` and
  /// nothing of it is made; ``recall(_:)`` then has its answer or its refusal.
  /// - Complexity: O(log *n*) to plan and make for *n* cards; the group's transaction and batch are shared.
  public func write(_ write: BoardWrite) async throws(BoardError) -> (version: Int, card: Card?) {
    // One transaction per edit: each its own, at once, contending for the stream's row lock with the
    // others (bounded by `lock_timeout` and the deadline), never queued behind them.
    guard commits == .group else { return try await commit([write])[0].get() }
    return try await withCheckedContinuation { answer in
      queued.append(Queued(write: write, answer: answer))
      if !isCommitting {
        isCommitting = true
        Task { await self.commitQueued() }
      }
    }.get()
  }

  /// A write waiting for its group, and where its answer goes.
  struct Queued: Sendable {
    let write: BoardWrite
    let answer: CheckedContinuation<Result<(version: Int, card: Card?), BoardError>, Never>
  }

  /// Commits the queued writes, a group at a time, until none is queued: a write waits for the group
  /// committing when it arrived, then for its own, each bounded by the deadline.
  func commitQueued() async {
    while !queued.isEmpty {
      let group = queued
      queued = []
      let answers = await commit(group.map(\.write))
      for (entry, answer) in zip(group, answers) { entry.answer.resume(returning: answer) }
    }
    isCommitting = false
  }

  /// What a group's transaction came to.
  enum GroupOutcome: Sendable {
    /// Committed (or made nothing): each write's answer, in order.
    case made([Result<(version: Int, card: Card?), BoardError>])
    /// Rolled back: the answers of these edits are recorded already (by another instance, meanwhile).
    case conflict(Set<[String]>)
  }

  /// Makes `writes` as one group, each attempt within ``PostgresSettings/writeDeadline``: an edit whose
  /// answer is recorded already is refused 503 `busy` (its resend is answered from the record), and the
  /// rest of the group is made again without it; a failure of the database answers every write of the
  /// group with it (one refused for contention is made again once first, within the same deadline: see
  /// ``attempt(_:race:)``).
  func commit(_ writes: [BoardWrite]) async -> [Result<(version: Int, card: Card?), BoardError>] {
    var answers = [Result<(version: Int, card: Card?), BoardError>?](repeating: nil, count: writes.count)
    var pending = Array(writes.indices)
    while !pending.isEmpty {
      let round = pending.map { writes[$0] }
      switch await withDeadline(
        settings.writeDeadline, logger: logger, { race in await self.attempt(round, race: race) })
      {
      case .success(.made(let made)):
        for (index, answer) in zip(pending, made) { answers[index] = answer }
        pending = []
      case .success(.conflict(let keys)):
        // Each round refuses at least one write: the loop ends.
        let refused = pending.filter { index in writes[index].ticket.map { keys.contains($0.key) } ?? false }
        for index in refused { answers[index] = .failure(.busy) }
        if refused.isEmpty { for index in pending { answers[index] = .failure(.busy) } }
        pending.removeAll { answers[$0] != nil }
      case .failure(let error):
        for index in pending { answers[index] = .failure(error) }
        pending = []
      }
    }
    return answers.map { $0 ?? .failure(.busy) }
  }

  /// One attempt at a group on a leased connection, checking `race` before each step. A group PostgreSQL
  /// refused for contention (``isContention(_:)``: nothing committed) is made again once on the same
  /// connection, within the same deadline: what held the lock (a stalled transaction, which
  /// `idle_in_transaction_session_timeout` ends) has usually let go by then.
  func attempt(_ writes: [BoardWrite], race: DeadlineRace) async -> Result<GroupOutcome, BoardError> {
    do {
      return .success(
        try await client.withConnection { connection in
          guard race.withLockedValue({ $0.attach(connection) }) else { throw CancellationError() }
          var contended = false
          while true {
            do {
              return try await self.writeGroup(writes, on: connection, race: race)
            } catch let error as PSQLError where !contended && Self.isContention(error) {
              contended = true
              self.logger.warning(
                "live-board: a group refused for contention, made again: \(Self.describe(error))")
              guard race.withLockedValue({ $0.madeNothing() }) else { throw error }
            }
          }
        })
    } catch let conflict as AnswerConflict {
      return .success(.conflict(conflict.keys))
    } catch let error as BoardError {
      return .failure(error)
    } catch {
      return .failure(Self.failure(error, logger: logger))
    }
  }

  /// The group on `connection`: in one statement, or in the locked transaction (rolled back when it fails).
  func writeGroup(_ writes: [BoardWrite], on connection: PostgresConnection, race: DeadlineRace) async throws
    -> GroupOutcome
  {
    // Groups are one at a time here, so holding the source while the statement waits for the stream's row
    // lock meets no writer of this instance holding the lock and waiting for the source.
    if commits == .group, let outcome = try await writeInOneStatement(writes, on: connection, race: race) {
      return outcome
    }
    try await connection.query("BEGIN", logger: logger)
    do {
      return try await writeLocked(writes, on: connection, race: race)
    } catch {
      _ = try? await connection.query("ROLLBACK", logger: logger)
      throw error
    }
  }

  /// A group made in one statement, its own transaction, when nothing was committed since the version this
  /// instance holds: prepared against that version, then `board_commit` (``commitFunction``) takes the
  /// stream's row lock and, if the stream is still there, records the answers, writes the rows, the log
  /// entry and the version and notifies; the prepared write is applied once it returns. The plan is the one
  /// the locked path would make: both are checked against the same version under the same lock.
  ///
  /// - Returns: The group's outcome; `nil` when it must take the locked path (``writeLocked(_:on:race:)``):
  ///   the stream moved (nothing was written), the next version is a checkpoint's, two writes share an edit
  ///   id, or a group that changes nothing could not be checked against the newest version.
  func writeInOneStatement(_ writes: [BoardWrite], on connection: PostgresConnection, race: DeadlineRace)
    async throws -> GroupOutcome?
  {
    let keys = writes.compactMap { $0.ticket?.key }
    let base = await source.version.number
    guard Set(keys).count == keys.count, (base + 1) % checkpointInterval != 0 else { return nil }
    guard race.withLockedValue({ $0.mayProceed() }) else { throw CancellationError() }
    let prepared: PreparedWrite<Column, [Result<PlannedWrite, BoardError>]>
    do {
      prepared = try await source.prepare(from: base) { (transaction: inout Transaction<Column>) in
        writes.map { write in Result { () throws(BoardError) in try write.make(in: &transaction) } }
      }
    } catch {
      return nil  // a follower made a version meanwhile
    }
    let releaser = prepared.releaser
    guard race.withLockedValue({ $0.hold(releaser) }) else {
      await prepared.abandon()
      throw CancellationError()
    }
    let planned = prepared.result
    let made = planned.compactMap { try? $0.get() }
    let tickets = made.compactMap(\.ticket)
    guard let batch = prepared.batch else {
      // Refusals (and writes that change nothing) hold if no version was made since `base`: one read says.
      await prepared.abandon()
      guard tickets.isEmpty, try await Self.newestVersion(on: connection, logger: logger) == base else {
        return nil
      }
      return .made(planned.map { outcome in outcome.map { (base, $0.card) } })
    }
    let dropped = tickets.filter { $0.answerMayBeDropped(newest: base, retention: settings.answerRetention) }
    if !dropped.isEmpty {
      await prepared.abandon()
      return .conflict(Set(dropped.map(\.key)))
    }
    let head: Int
    let taken: [Int]?
    do {
      let answers = try Self.encodeAnswers(tickets)
      let rows = try Self.encodeRows(made.map(\.rows))
      let entry = String(decoding: WireCoder().encode(batch), as: UTF8.self)
      let doorbell = Doorbell.payload(stream: stream, version: batch.to.number, entry: entry)
      guard race.withLockedValue({ $0.commit() }) else { throw CancellationError() }
      let row = try await connection.query(
        """
        SELECT head, taken FROM board_commit(
          \(stream), \(base), \(answers)::jsonb, \(rows)::jsonb, \(entry), \(doorbell))
        """, logger: logger
      ).collect()
      guard let first = row.first else { throw BoardSetupError("board_commit returned no row") }
      (head, taken) = try first.decode((Int, [Int]?).self)
    } catch {
      await prepared.abandon()
      throw error
    }
    guard head == batch.to.number, taken == [] else {
      await prepared.abandon()
      guard race.withLockedValue({ $0.madeNothing() }) else { throw CancellationError() }
      guard let taken, !taken.isEmpty else { return nil }  // the stream moved
      return .conflict(Set(taken.compactMap { tickets.indices.contains($0) ? tickets[$0].key : nil }))
    }
    // The deadline may have abandoned the write meanwhile: then the log's follower makes it.
    let applied = await prepared.applyIfHeld()?.number ?? head
    return .made(planned.map { outcome in outcome.map { (applied, $0.card) } })
  }

  /// The body of ``commit(_:)``, in an open transaction on `connection`; commits it. Under the stream's row
  /// lock, catch up to the newest logged version, plan each write in order against the board the ones
  /// before it left (a refused one leaves no trace) and prepare them in the source as one write, record
  /// each answer (one recorded already, or an edit too old to tell, rolls the group back:
  /// ``AnswerConflict``), write the rows, the log entry and the version, notify, commit, then apply the
  /// prepared write (or abandon it when anything failed).
  ///
  /// The group races its deadline (``WriteDeadline``): if the deadline comes first, every write of it is
  /// answered 503 at once, the connection is closed (a query stuck on a connection PostgreSQL dropped fails
  /// then), and the group starts no further step; what it prepared is abandoned as soon as its last query
  /// returns. A `COMMIT` that succeeds after the deadline is still applied (or made by the log's follower):
  /// the source never misses a committed version.
  func writeLocked(_ writes: [BoardWrite], on connection: PostgresConnection, race: DeadlineRace) async throws
    -> GroupOutcome
  {
    // Entries other instances committed before this lock: make them first, from this connection's view.
    let (head, entries) = try await Self.lockStream(
      after: await source.version.number, on: connection, logger: logger)
    for entry in entries {
      guard race.withLockedValue({ $0.mayProceed() }) else { throw CancellationError() }
      try await make(entry)
    }
    guard race.withLockedValue({ $0.mayProceed() }) else { throw CancellationError() }
    let prepared: PreparedWrite<Column, [Result<PlannedWrite, BoardError>]>
    do {
      prepared = try await source.prepare(from: head) { (transaction: inout Transaction<Column>) in
        var planned: [Result<PlannedWrite, BoardError>] = []
        for write in writes {
          do throws(BoardError) {
            planned.append(.success(try write.make(in: &transaction)))
          } catch {
            planned.append(.failure(error))
          }
        }
        return planned
      }
    } catch {
      // The source is not at the log's head (a catch-up failed) or disagrees with it: nothing was written.
      logger.error("live-board: the source refused a write at version \(head): \(error)")
      throw BoardError.busy
    }
    let releaser = prepared.releaser
    guard race.withLockedValue({ $0.hold(releaser) }) else {
      await prepared.abandon()
      throw CancellationError()
    }
    let made = prepared.result.compactMap { try? $0.get() }
    let version = prepared.batch?.to.number ?? head
    do {
      guard race.withLockedValue({ $0.mayProceed() }) else { throw CancellationError() }
      var conflicts = Set<[String]>()
      for ticket in made.compactMap(\.ticket) {
        // An edit too old to tell whether it was made is not made: its answer may have been pruned.
        if ticket.answerMayBeDropped(newest: head, retention: settings.answerRetention) {
          conflicts.insert(ticket.key)
        } else if try await !record(ticket, at: version, on: connection) {
          conflicts.insert(ticket.key)
        }
      }
      if !conflicts.isEmpty { throw AnswerConflict(keys: conflicts) }
      if let batch = prepared.batch {
        // Every write's rows, the log entry, the stream's version and the doorbell (with the entry when it
        // fits, so that the followers read nothing) in one statement, one round trip, whatever the group's
        // size; PostgreSQL sends the notification when the transaction commits.
        let rows = try Self.encodeRows(made.map(\.rows))
        let entry = String(decoding: WireCoder().encode(batch), as: UTF8.self)
        let doorbell = Doorbell.payload(stream: stream, version: version, entry: entry)
        // Its one row read to the end: an error the statement meets after announcing its row (a row or an
        // entry refused by a constraint or a trigger, a full notification queue) comes with the rows, and one
        // left unread would leave the transaction failed, whose COMMIT PostgreSQL answers with a silent
        // ROLLBACK.
        _ = try await connection.query(
          """
          WITH rows AS (SELECT board_write_rows(\(rows)::jsonb) AS made),
          entry AS (
            INSERT INTO board_log (stream, version, batch) VALUES (\(stream), \(version), \(entry))),
          head AS (UPDATE board_stream SET version = \(version) WHERE name = \(stream))
          SELECT pg_notify('board_log', \(doorbell)) FROM rows
          """, logger: logger
        ).collect()
        if version % checkpointInterval == 0 {
          try await checkpoint(batch.snapshot.sections, at: version, on: connection)
        }
      }
      guard race.withLockedValue({ $0.commit() }) else { throw CancellationError() }
      try await connection.query("COMMIT", logger: logger)
    } catch {
      await prepared.abandon()
      throw error
    }
    let planned = prepared.result
    let applied: Int
    if prepared.batch == nil {
      await prepared.abandon()
      applied = head
    } else {
      // The deadline may have abandoned the write meanwhile: then the log's follower makes it.
      applied = await prepared.applyIfHeld()?.number ?? version
    }
    return .made(planned.map { outcome in outcome.map { (applied, $0.card) } })
  }

  /// Records `ticket`'s answer, `version`, in the open transaction.
  /// - Returns: `false` when an answer is recorded under its (user, id) already: nothing was recorded.
  func record(_ ticket: EditTicket, at version: Int, on connection: PostgresConnection) async throws -> Bool {
    let rows = try await connection.query(
      """
      INSERT INTO edit_answer (scope, id, version, fingerprint)
        VALUES (\(ticket.scope), \(ticket.edit.id), \(version), \(ticket.fingerprint))
        ON CONFLICT DO NOTHING RETURNING 1
      """,
      logger: logger
    ).collect()
    return !rows.isEmpty
  }

  /// The version recorded as the answer to `ticket`'s edit, read with the stream's newest version in one
  /// statement; see ``BoardStore/recall(_:)``.
  public func recall(_ ticket: EditTicket) async throws(BoardError) -> Int? {
    let logger = logger
    let (scope, id) = (ticket.scope, ticket.edit.id)
    let row: (Int?, String?, Int)
    do {
      row = try await client.withConnection {
        (connection: PostgresConnection) async throws -> (Int?, String?, Int) in
        let rows = try await connection.query(
          """
          SELECT answer.version, answer.fingerprint, stream.version
          FROM board_stream AS stream
          LEFT JOIN edit_answer AS answer ON answer.scope = \(scope) AND answer.id = \(id)
          """, logger: logger
        ).collect()
        guard let first = rows.first else { throw BoardSetupError("no stream in the database") }
        return try first.decode((Int?, String?, Int).self)
      }
    } catch {
      throw Self.failure(error, logger: logger)
    }
    return try decide(ticket, recorded: row.0, fingerprint: row.1, newest: row.2)
  }

  /// Stores the board at `version` and prunes: two checkpoints are kept, and the log after the older; the
  /// answers of edits made more than ``answerRetention`` versions ago.
  func checkpoint(_ columns: [Column], at version: Int, on connection: PostgresConnection) async throws {
    let state = try Self.encodeCheckpoint(columns, stream: stream, version: version)
    try await connection.query(
      "INSERT INTO board_checkpoint (stream, version, state) VALUES (\(stream), \(version), \(state))",
      logger: logger)
    try await connection.query(
      """
      DELETE FROM board_checkpoint WHERE version < (
        SELECT version FROM board_checkpoint ORDER BY version DESC OFFSET 1 LIMIT 1)
      """, logger: logger)
    // Only what is both before the older checkpoint and older than the retention: an instance that lags
    // (its doorbell and reads stalled through a PostgreSQL restart) catches up from the log in place.
    // Always a prefix, by version: `made_at` is a transaction's start, not in version order, so the cut
    // stops below the oldest version still within the retention, and leaves no hole among those kept.
    let retention = Double(settings.logRetention.components.seconds)
    try await connection.query(
      """
      DELETE FROM board_log WHERE version <= LEAST(
        (SELECT MIN(version) FROM board_checkpoint),
        COALESCE(
          (SELECT MIN(version) - 1 FROM board_log
            WHERE made_at >= now() - make_interval(secs => \(retention))),
          (SELECT MAX(version) FROM board_log)))
      """, logger: logger)
    try await connection.query(
      "DELETE FROM edit_answer WHERE version <= \(version - settings.answerRetention)", logger: logger)
  }

  /// Creates (or replaces) `board_write_rows(changes jsonb)`, which makes a group's row changes in order,
  /// as ``encodeRows(_:)`` lists them: positions in a column are kept dense, each change shifting the cards
  /// after the place it takes or leaves. A change of another kind fails the statement (`CASE_NOT_FOUND`).
  static let writeRowsFunction: PostgresQuery = """
    CREATE OR REPLACE FUNCTION board_write_rows(changes jsonb) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE c jsonb;
    BEGIN
      FOR c IN SELECT value FROM jsonb_array_elements(changes) LOOP
        CASE c->>'kind'
        WHEN 'insert' THEN
          UPDATE card SET position = position + 1
            WHERE columnid = c->>'column' AND position >= (c->>'at')::int;
          INSERT INTO card (id, title, owner, columnid, position)
            VALUES (c->>'id', c->>'title', c->>'owner', c->>'column', (c->>'at')::int);
        WHEN 'update' THEN
          UPDATE card SET title = c->>'title', owner = c->>'owner' WHERE id = c->>'id';
        WHEN 'move' THEN
          UPDATE card SET position = position - 1
            WHERE columnid = c->>'from' AND position > (c->>'fromAt')::int;
          UPDATE card SET position = position + 1
            WHERE columnid = c->>'to' AND position >= (c->>'toAt')::int AND id <> c->>'id';
          UPDATE card SET columnid = c->>'to', position = (c->>'toAt')::int WHERE id = c->>'id';
        WHEN 'delete' THEN
          DELETE FROM card WHERE id = c->>'id';
          UPDATE card SET position = position - 1
            WHERE columnid = c->>'column' AND position > (c->>'at')::int;
        END CASE;
      END LOOP;
      RETURN jsonb_array_length(changes);
    END $$
    """

  /// A group's row changes as `board_write_rows` takes them: a JSON array, in order.
  /// - Complexity: O(*k*) for *k* changes.
  static func encodeRows(_ changes: [RowChange]) throws -> String {
    let list = changes.map { change -> [String: String?] in
      switch change {
      case .insert(let card, let column, let index):
        [
          "kind": "insert", "id": card.id, "title": card.title, "owner": card.owner, "column": column,
          "at": "\(index)",
        ]
      case .update(let card):
        ["kind": "update", "id": card.id, "title": card.title, "owner": card.owner]
      case .move(let id, let from, let to):
        [
          "kind": "move", "id": id, "from": from.column, "fromAt": "\(from.index)", "to": to.column,
          "toAt": "\(to.index)",
        ]
      case .delete(let id, let column, let index):
        ["kind": "delete", "id": id, "column": column, "at": "\(index)"]
      }
    }
    // Keys sorted, so that the same changes are the same text; nil is JSON's null.
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(list), as: UTF8.self)
  }

  /// Creates (or replaces) `board_commit`, which makes a group prepared against version `base` in one
  /// statement: under the stream's row lock, when the stream is at `base` and none of `answers` (a JSON array
  /// of `scope`, `id`, `fingerprint`, as ``encodeAnswers(_:)`` writes it) is recorded already, it records
  /// them at `base + 1`, writes the rows (`board_write_rows`), the log entry and the version, and notifies
  /// `doorbell`. Returns the stream's version (`base + 1` when made) and the indexes in `answers` of those
  /// recorded already (`NULL` when the stream was not at `base`): nothing is written unless it returns
  /// `base + 1` and an empty list.
  static let commitFunction: PostgresQuery = """
    CREATE OR REPLACE FUNCTION board_commit(
      stream_name text, base bigint, answers jsonb, changes jsonb, entry text, doorbell text,
      OUT head bigint, OUT taken bigint[]) LANGUAGE plpgsql AS $$
    BEGIN
      SELECT version INTO head FROM board_stream WHERE name = stream_name FOR UPDATE;
      IF head IS DISTINCT FROM base THEN
        RETURN;
      END IF;
      SELECT coalesce(array_agg(a.n - 1 ORDER BY a.n), '{}') INTO taken
        FROM jsonb_array_elements(answers) WITH ORDINALITY AS a(value, n)
        WHERE EXISTS (
          SELECT 1 FROM edit_answer AS e WHERE e.scope = a.value->>'scope' AND e.id = a.value->>'id');
      IF cardinality(taken) > 0 THEN
        RETURN;
      END IF;
      INSERT INTO edit_answer (scope, id, version, fingerprint)
        SELECT value->>'scope', value->>'id', base + 1, value->>'fingerprint'
        FROM jsonb_array_elements(answers);
      PERFORM board_write_rows(changes);
      INSERT INTO board_log (stream, version, batch) VALUES (stream_name, base + 1, entry);
      UPDATE board_stream SET version = base + 1 WHERE name = stream_name;
      PERFORM pg_notify('board_log', doorbell);
      head := base + 1;
    END $$
    """

  /// Edits' tickets as `board_commit` records them: a JSON array of `scope`, `id` and `fingerprint`.
  /// - Complexity: O(*k*) for *k* tickets.
  static func encodeAnswers(_ tickets: [EditTicket]) throws -> String {
    let list = tickets.map { ["scope": $0.scope, "id": $0.edit.id, "fingerprint": $0.fingerprint] }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(list), as: UTF8.self)
  }

  /// A database error as the client sees it: 503 `busy` (retry) when PostgreSQL could not be reached or
  /// the transaction could not commit; the details are logged, not sent.
  static func failure(_ error: any Error, logger: Logger) -> BoardError {
    if let error = error as? BoardError { return error }
    logger.error("live-board: database error: \(describe(error))")
    return .busy
  }

  /// Whether PostgreSQL refused a statement for contention with other transactions: a lock not granted
  /// within `lock_timeout` (SQLSTATE 55P03), a deadlock (40P01) or a serialization failure (40001). The
  /// server answered, so the statement failed and its transaction commits nothing: the group may be made
  /// again. A lost connection is not one (a `COMMIT` in flight may have been made).
  static func isContention(_ error: PSQLError) -> Bool {
    guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
    return ["55P03", "40P01", "40001"].contains(state)
  }

  /// What a log line says of `error`: for PostgreSQL's, the error's kind, and when the server sent one its
  /// SQLSTATE and message (never its detail, which can quote a row's values); otherwise the error itself.
  static func describe(_ error: any Error) -> String {
    if let error = error as? BoardError { return "\(error.code): \(error.detail)" }
    guard let error = error as? PSQLError else { return String(describing: error) }
    guard let server = error.serverInfo else { return "PostgreSQL: \(error.code)" }
    let state = server[.sqlState] ?? "?"
    let message = server[.message] ?? ""
    return "PostgreSQL: \(error.code): SQLSTATE \(state): \(message)"
  }
}

/// The database is not what this version of the service expects.
struct BoardSetupError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
