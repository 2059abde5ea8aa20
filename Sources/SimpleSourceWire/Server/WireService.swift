// The server side of the wire: one source served to many clients, each over its query and scope, with
// identical subscriptions sharing one projection and one encoded batch.

public import Foundation
public import SimpleSourceCore

/// The scope of a service that does not restrict rows by connection: every client may see every row.
public struct NoScope: Hashable, Sendable {
  /// The only scope.
  public init() {}
}

/// Serves one data source over the wire to any number of clients, whatever carries the bytes.
///
/// Make one per source, then a ``WireSession`` per connection with ``session(scope:origin:pacing:sink:send:)``:
///
/// ```swift
/// let service = WireService(source: tasks, stream: "tasks-\(UUID())", queries: [byColumn]) { user in
///   { task in task.owner == nil || task.owner == user }  // the rows this user may see
/// }
/// // In a WebSocket handler:
/// let session = service.session(scope: user) { bytes in try await socket.send(bytes) }
/// for try await message in socket.messages { await session.receive(message) }
/// await session.close()
/// ```
///
/// - **Queries.** A client's `subscribe` may name one of `queries`, with its parameters (format 2); it
///   then receives only that slice, as versioned batches with resume, exactly as the whole source.
/// - **Scope.** Each session carries a scope that `sections` turns into a section predicate and `rows`
///   into a row predicate, applied before any query: a section or row outside it never leaves the server
///   (not its id, header or position, in no reset, batch, views message, refusal or answer), and a refused
///   section's rows go with it. A section or row that leaves a scope is a delete for that client, one that
///   enters is an insert. A rule such as "the members of a channel" belongs to `sections`: the channel's
///   messages then need no copy of it.
/// - **Shared work.** Every subscribe follows its scope's state: the source itself when no rule restricts
///   what a scope sees, otherwise one ``ProjectedDataSource`` of the source per scope, shared by every
///   session of the scope. What a client is shown of it (the whole of it, one query, or the views of a
///   subscribe of several views, format 3) is projected from each batch of that state once per (query,
///   parameters, scope), for every session and format that asks for it: a format-2 query and a format-3
///   view of the same query are one projection, and an edit costs each distinct view O(*k* log *n*). Each
///   message is encoded once per batch, form and format; a reset once per (view, version, format). With a
///   ``WireSink``, the scope's publisher writes each batch's message to the sink of every session parked
///   with one, whatever it shows: no task is woken per client. The last session to leave a view or a
///   scope's state keeps it idle for resumes; the `keepingIdleViews` most recently used idle ones are kept,
///   and older ones are dropped.
/// - **Streams.** The whole source, with no scope, is `stream`; a scope's state and each query's view have
///   the stream `stream` followed by `.v` and a stable hash of the query, parameters and scope, the same on
///   every instance serving `stream` (the views of a subscribe of several views share their scope's). A
///   client resumes from any version its scope's state retains, even on an instance that makes the state
///   or the view only then (``ProjectedDataSource/subscribe(from:pacing:)``; a view's state at that version
///   is the projection of the scope's state then), and resets otherwise. Make `stream` unique per source
///   history (a restart that loses it must change it).
/// - **Edits.** With a ``WireWriter`` (`edits`), clients may send ``WireMessage/edit(_:)``: each edit id is
///   made once *per scope* (the newest 4,096 (scope, id) pairs are remembered, with their edits, so an edit
///   sent again after a reconnect gets its first answer, and another edit under a known id is refused with
///   ``WireError/Code-swift.struct/editIDReused``), and answered on the session that sent it, after the batches of its
///   version that session's subscription carries. The scope is the client's identity for answers: an id
///   another scope used is a new edit, so no client is told another's answer, however ids are chosen.
///   That memory is per process: a writer that records answers with its writes answers a resend on any
///   instance and after a restart (``WireEdit/recall(recorded:fingerprint:answersKeptFrom:)``). Without a writer, an edit is refused with ``WireError/Code-swift.struct/editNotMade``. See
///   <doc:WritingFromAClient>.
/// - **Versions.** A view's versions are the source's (``ProjectedVersions/parent``), with gaps where the
///   source changed nothing the view shows: a client whose write was answered with the source's version
///   *v* holds it once it holds *v* or later, when the write changed what it is shown.
public actor WireService<Section: SectionType, Scope: Hashable & Sendable>
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// The rows a scope may see.
  public typealias Rows = @Sendable (Scope) -> @Sendable (Section.Item) -> Bool
  /// The sections a scope may see, read from a section's own content (its id and header).
  public typealias Sections = @Sendable (Scope) -> @Sendable (Section) -> Bool

  // Guard map: `admissions` and the scopes' states and views (`scopes`, `views`, `viewsMade`, `liveViewsPerScope`,
  // `viewsOfOrigins`)
  // and the rates' buckets (`subscribeRates`, `freshViewRates`) are the actor's. The edit answers (`answers`) and the
  // counters `sessionsMade` and `resetsEncoded` are locks of their own, taken alone; each shared state's and view's
  // encodings and steps are behind their own locks. A scope's state is started by one task (its `start`), which every
  // session opening it awaits, so it is projected once however many sessions race; a reset's views are projected in a
  // task the opening session awaits, off the actor; an edit is made in its caller's task, off the actor, and a resend
  // of an edit being made waits in `answers` for that answer.
  /// The whole source's stream name; views' streams start with it.
  public nonisolated let stream: String
  /// The source served.
  public nonisolated let source: any DataSourceType<Section>
  /// The queries clients may name, by name.
  public nonisolated let queries: [String: WireQuery<Section>]
  /// The steps its views project through (``WireQuery``'s, when it has queries).
  let steps: ProjectionSteps<Section>
  /// The rows each scope may see; `nil` when every scope sees every row.
  nonisolated let rows: Rows?
  /// The sections each scope may see; `nil` when every scope sees every section.
  nonisolated let sections: Sections?
  /// How many versions each view retains.
  nonisolated let history: HistoryLimit
  /// What each scope may hold.
  public nonisolated let limits: WireLimits
  /// The subscribed sessions of each scope, by number.
  var admissions = ScopeAdmissions<Scope, Int>()
  /// The number of the last session made.
  nonisolated let sessionsMade = Locked(0)
  /// How many reset messages were encoded: once per (view, version, format), however many clients
  /// connect then.
  package nonisolated let resetsEncoded = Locked(0)
  /// The newest reset and batch of the whole source, encoded, for clients that follow it with no view.
  nonisolated let wholeSourceEncodings: SharedEncodings
  /// Makes clients' edits; `nil` when clients may not write.
  nonisolated let writer: WireWriter<Section, Scope>?
  /// The answers to the newest edits, by the scope that made them and their id (``EditAnswers``), the
  /// newest ``rememberedEdits`` kept: behind a lock of their own, so that an edit costs no hop to the
  /// service's actor.
  nonisolated let answers = Locked(
    EditAnswers<EditKey, CheckedContinuation<Result<Int, WireError>?, Never>>(
      capacity: rememberedEdits))
  /// How many edits' answers are remembered.
  static var rememberedEdits: Int { 4_096 }
  /// The scopes' states sessions follow, and the idle ones kept.
  var scopes: SharedViews<Scope, ScopeState>
  /// The views sessions show (queries, and the views of subscribes of several views), projected once per
  /// (query, parameters, scope) from the scope's state, and the idle ones kept.
  var views: SharedViews<ViewKey, SharedViewSteps<Section>>
  /// The number of the last view or scope state made.
  var viewsMade = 0
  /// The distinct views each scope's sessions show now, counted against ``WireLimits/viewsPerScope`` and
  /// their rows against ``WireLimits/rowsPerScope``.
  var liveViewsPerScope: [Scope: Set<ViewKey>] = [:]
  /// The distinct views each origin's sessions show now, each with the number of its sessions' leases of
  /// it, counted against ``WireLimits/viewsPerOrigin`` and their rows against ``WireLimits/rowsPerOrigin``.
  var viewsOfOrigins: [String: [ViewKey: Int]] = [:]
  /// The subscribes each scope and origin made lately, against ``WireLimits/subscribes`` and
  /// ``WireLimits/subscribesPerOrigin``.
  var subscribeRates: ScopeAndOriginRates<Scope>
  /// The fresh views each scope and origin made lately, against ``WireLimits/freshViews`` and
  /// ``WireLimits/freshViewsPerOrigin``.
  var freshViewRates: ScopeAndOriginRates<Scope>
  /// The time for rates, in seconds since any fixed origin, never going back: the system's uptime.
  var now: @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }
  /// The jitter added to a rate's retry-after (seconds): up to half of it, at random.
  var jitter: @Sendable (Double) -> Double = { $0 * Double.random(in: 0..<0.5) }

  /// Serves `source` to clients whose scope restricts the rows they see.
  /// - Parameters:
  ///   - source: The source served.
  ///   - stream: The source's stream name: unique per run of a source that counts versions anew, the same
  ///     in every instance that follows one log.
  ///   - queries: The queries clients may name; their names must differ.
  ///   - keepingIdleViews: How many views, and how many scopes' states, no session uses are kept.
  ///   - history: How many versions each scope's state retains for clients that resume (the whole source
  ///     retains its own).
  ///   - limits: What each scope may cost: subscribed connections, views per subscribe and per scope,
  ///     rates of subscribes and of fresh views.
  ///   - edits: Makes the edits clients send; `nil` refuses them.
  ///   - rows: The row predicate of each scope; a pure function of the row.
  public init<Source: DataSourceType>(
    source: Source, stream: String, queries: [WireQuery<Section>] = [], keepingIdleViews: Int = 16,
    history: HistoryLimit = .default, limits: WireLimits = WireLimits(),
    edits: WireWriter<Section, Scope>? = nil,
    rows: @escaping Rows
  ) where Source.Section == Section {
    self.init(
      serving: source, stream: stream, queries: queries, keepingIdleViews: keepingIdleViews, history: history,
      limits: limits, edits: edits, sections: nil, rows: rows)
  }

  /// Serves `source` to clients whose scope restricts the sections they see, and the rows in them.
  ///
  /// ```swift
  /// let service = WireService(source: chat, stream: "chat-\(UUID())", sections: { user in
  ///   { channel in channel.members.contains(user) }  // the channels this user sees, with their messages
  /// })
  /// ```
  /// - Parameters:
  ///   - source: The source served.
  ///   - stream: The source's stream name: unique per run of a source that counts versions anew, the same
  ///     in every instance that follows one log.
  ///   - queries: The queries clients may name; their names must differ.
  ///   - keepingIdleViews: How many views, and how many scopes' states, no session uses are kept.
  ///   - history: How many versions each scope's state retains for clients that resume (the whole source
  ///     retains its own).
  ///   - limits: What each scope may cost: subscribed connections, views per subscribe and per scope,
  ///     rates of subscribes and of fresh views.
  ///   - edits: Makes the edits clients send; `nil` refuses them.
  ///   - sections: The section predicate of each scope; a pure function of the section's own content (its
  ///     id and header: its items may be missing).
  ///   - rows: The row predicate of each scope, for the rows of the sections it sees; `nil`: all of them.
  public init<Source: DataSourceType>(
    source: Source, stream: String, queries: [WireQuery<Section>] = [], keepingIdleViews: Int = 16,
    history: HistoryLimit = .default, limits: WireLimits = WireLimits(),
    edits: WireWriter<Section, Scope>? = nil,
    sections: @escaping Sections, rows: Rows? = nil
  ) where Source.Section == Section {
    self.init(
      serving: source, stream: stream, queries: queries, keepingIdleViews: keepingIdleViews, history: history,
      limits: limits, edits: edits, sections: sections, rows: rows)
  }

  init(
    serving source: any DataSourceType<Section>, stream: String, queries: [WireQuery<Section>],
    keepingIdleViews: Int, history: HistoryLimit, limits: WireLimits, edits: WireWriter<Section, Scope>?,
    sections: Sections?, rows: Rows?
  ) {
    self.history = history
    self.limits = limits
    writer = edits
    wholeSourceEncodings = SharedEncodings(counting: resetsEncoded)
    self.source = source
    self.stream = stream
    var byName: [String: WireQuery<Section>] = [:]
    for query in queries {
      precondition(byName[query.name] == nil, "SimpleSource: two queries are named \(query.name)")
      byName[query.name] = query
    }
    self.queries = byName
    // Every query's steps are the same functions, specialised where the query was declared; a service with
    // no query steps its views of the whole scope through its own, generic ones.
    steps = queries.first?.steps ?? ProjectionSteps()
    self.rows = rows
    self.sections = sections
    scopes = SharedViews(idleLimit: keepingIdleViews)
    views = SharedViews(idleLimit: keepingIdleViews)
    subscribeRates = ScopeAndOriginRates(
      counted: "subscribes", scope: ("subscribes", limits.subscribes),
      origin: ("subscribesPerOrigin", limits.subscribesPerOrigin))
    freshViewRates = ScopeAndOriginRates(
      counted: "views no one holds", scope: ("freshViews", limits.freshViews),
      origin: ("freshViewsPerOrigin", limits.freshViewsPerOrigin))
  }

  /// Reads the time for rates from `clock`, and adds `jitter` to their retry-afters (tests make both exact).
  package func useClock(
    _ clock: @escaping @Sendable () -> Double,
    jitter: @escaping @Sendable (Double) -> Double = { _ in 0 }
  ) {
    now = clock
    self.jitter = jitter
  }

  /// A session for one connection of a client whose scope is `scope`; see ``WireSession``.
  /// - Parameters:
  ///   - scope: What the client may see.
  ///   - origin: Where the client connects from (its address, as the transport knows it), whose subscribes
  ///     and fresh views ``WireLimits`` rates too, whatever their scopes; `nil`: rated by scope only.
  ///   - pacing: How often the client receives batches.
  ///   - sink: Writes a message without waiting, when the transport can (see ``WireSink``): between
  ///     batches the session parks with it (holding no task), and the scope's publisher hands each batch's
  ///     message, encoded once per message and format, to the sink of every session that holds the version
  ///     before it, instead of waking a task per client to send it. A sink that returns `false` (a full
  ///     connection) starts a task for the session, which sends that batch through `send` (which waits), and
  ///     any catch-up after it, then parks with its sink again. The transport queues both in one order: a
  ///     message given to either before another reaches the client first (an edit's answer follows its
  ///     batch, a batch follows the reset). Paced sessions never use it. `nil`: every message goes
  ///     through `send`.
  ///   - send: Sends one message's bytes (JSON text) to the client; throwing ends the subscription.
  public nonisolated func session(
    scope: Scope, origin: String? = nil, pacing: Pacing = .immediate, sink: WireSink? = nil,
    send: @escaping @Sendable (Data) async throws -> Void
  ) -> WireSession<Section, Scope> {
    WireSession(service: self, scope: scope, origin: origin, pacing: pacing, sink: sink, send: send)
  }

  /// The number of views (a query with its parameters, or a view of a subscribe of several views) that
  /// sessions use now.
  package var liveViewCount: Int { views.live.count }
  /// The number of views kept idle for resumes.
  package var idleViewCount: Int { views.idle.count }
  /// The scopes whose state sessions follow now (a service with no scope rules follows its source, and
  /// has none).
  package var liveScopeCount: Int { scopes.live.count }
  /// The lane `scope`'s state follows the source in (``ScopeLoad``); `nil` when no session follows it.
  package func lane(ofScope scope: Scope) -> SubscriptionLane? { scopes.live[scope]?.entry.view.load.lane }
  /// The views sessions use now, and how many states and steps they made in all (tests read it: sessions
  /// in step share them).
  package var liveViewSteps: (views: Int, projected: Int) {
    let shared = views.live.values.map(\.entry.view)
    return (shared.count, shared.reduce(0) { $0 + $1.projected })
  }

  // MARK: - Views

  /// What a view is shared by: the query asked for (`nil`: the whole scope) and the scope.
  struct ViewKey: Hashable {
    var query: WireQueryRequest?
    var scope: Scope
  }

  /// The state one scope may see, projected from the source once for every session of the scope: its
  /// stream, the projection once it has started, and its newest reset and batch, encoded.
  final class ScopeState: Sendable {
    let stream: String
    let start: Task<Result<ProjectedDataSource<Section>, ProjectionError>, Never>
    let encodings: SharedEncodings
    /// What the sessions that follow it show.
    let load: ScopeLoad

    init(
      stream: String, start: Task<Result<ProjectedDataSource<Section>, ProjectionError>, Never>,
      encodings: SharedEncodings, load: ScopeLoad
    ) {
      self.stream = stream
      self.start = start
      self.encodings = encodings
      self.load = load
    }
  }

  /// A session's use of its scope's state, given back with ``release(_:)-(Lease)``.
  struct Lease: Sendable {
    let scope: Scope
    let number: Int
    /// Keeps the scope's state alive while the session follows it.
    let source: ProjectedDataSource<Section>
    /// The scope's load, which counts the session and the views it shows until it gives the lease back.
    let load: ScopeLoad
    let views: Int
  }

  /// A session's use of a view, given back with ``release(_:)-([ViewLease])``.
  struct ViewLease: Sendable {
    let key: ViewKey
    let number: Int
    /// The origin of the session that holds it, if it has one.
    let origin: String?
  }

  /// What a subscribe asks for: its scope's state (format 1 or 2 with no query), one query of it
  /// (format 2), or several views (format 3), by the client's names for them.
  enum Asked: Sendable {
    case scope
    case query(WireQueryRequest)
    case views([String: WireQueryRequest?])
  }

  /// A subscribe's feed (of its scope's state), what it shows of it, its views' states at the feed's
  /// start (for a reset), and what it uses.
  struct Opened: Sendable {
    let feed: WireFeed<Section>
    let shown: Shown<Section>
    /// The views' states at the reset's version; `nil` for a resume (projected from its first batch) or
    /// for the scope's state itself.
    let states: [String: ProjectionState<Section>]?
    /// The scope's state's encodings, shared by its sessions that show it as it is.
    let encodings: SharedEncodings
    let lease: Lease?
    let viewLeases: [ViewLease]
  }

  /// The feed for a client's subscribe, what it shows, and the scope's state and views it uses. Every
  /// subscribe follows its scope's state (the source itself when no scope restricts it), shared per scope;
  /// a query and the views of a subscribe of several views are projected from it, shared per (query,
  /// parameters, scope). A reset's views are projected here, in a task of their own, so a query that
  /// cannot be evaluated is refused with nothing changed.
  /// - Throws: ``WireError``: ``WireError/Code-swift.struct/unknownQuery``,
  ///   ``WireError/Code-swift.struct/invalidParameters``, ``WireError/Code-swift.struct/limitReached`` or
  ///   ``WireError/Code-swift.struct/queryFailed``; nothing is held then.
  /// - Complexity: as ``DataSourceType/wireFeed(stream:request:pacing:)``, besides O(*v* *n*) predicate
  ///   calls for *v* views whose state at the reset's version no session made yet, and O(*n*) to start a
  ///   scope's state no session follows.
  func open(
    stream requested: String?, from: Int?, asking asked: Asked, scope: Scope, origin: String? = nil,
    pacing: Pacing, session: Int, replacing: Opened? = nil, rated: Bool = true
  ) async throws(WireError) -> Opened {
    if rated { try subscribeRates.take(1, scope: scope, origin: origin, now: now(), jitter: jitter) }
    // Views are shared, counted and streamed by their canonical form: every spelling a query reads alike.
    let asked = try canonical(asked)
    let named: [String: WireQueryRequest?]
    switch asked {
    case .scope: named = [:]
    case .query(let query): named = ["": query]
    case .views(let requested): named = requested
    }
    let leaving = replacing?.viewLeases ?? []
    let added = try checkBudget(named, scope: scope, origin: origin, leaving: leaving)
    let (views, viewLeases) = try acquireViews(named, scope: scope, origin: origin)
    let counted = admissions.scope(of: session)
    guard admissions.admit(session, to: scope, limit: limits.subscriptionsPerScope) else {
      release(viewLeases)
      throw WireError(
        .limitReached,
        "this scope holds \(limits.subscriptionsPerScope) subscribed connections, as many as the server allows"
      )
    }
    do throws(WireError) {
      var query: WireQueryRequest?
      if case .query(let asked) = asked { query = asked }
      let (feed, lease, encodings) = try await follow(
        scope, query: query, from: (requested, from), pacing: pacing, views: named.count)
      var states: [String: ProjectionState<Section>]?
      if case .reset(_, let version, let snapshot) = feed.start, !views.isEmpty {
        let projecting = Task.schedulable("projecting a subscribe's views") {
          SharedViewSteps.start(views, snapshot, at: version)
        }
        var result = await projecting.value
        if case .success = result {
          // The new views' rows are known now.
          do throws(WireError) {
            try checkRows(added, scope: scope, origin: origin, leaving: leaving)
          } catch {
            result = .failure(error)
          }
        }
        switch result {
        case .success(let made): states = made
        case .failure(let error):
          feed.cancel()
          if let lease { release(lease) }
          throw error
        }
      }
      let shown: Shown<Section>
      switch asked {
      case .scope: shown = .scope
      case .query: shown = .query(views[""]!)
      case .views: shown = .views(views)
      }
      return Opened(
        feed: feed, shown: shown, states: states, encodings: encodings, lease: lease, viewLeases: viewLeases)
    } catch {
      // A refused subscribe changes nothing: the session counts where it counted before.
      admissions.restore(session, to: counted)
      release(viewLeases)
      throw error
    }
  }

  /// The feed of `scope`'s state: the source's own when no rule restricts what a scope sees, the scope's
  /// shared ``ProjectedDataSource`` otherwise, whose load counts the session and its `views` while the
  /// lease is held. Its stream is the query's (`query`), or the scope's.
  private func follow(
    _ scope: Scope, query: WireQueryRequest?, from request: (stream: String?, from: Int?), pacing: Pacing,
    views: Int
  ) async throws(WireError) -> (WireFeed<Section>, Lease?, SharedEncodings) {
    let queryStream = query.map { Self.viewStream(of: stream, query: $0, scope: scope) }
    guard rows != nil || sections != nil else {
      let feed = await source.wireFeed(stream: queryStream ?? stream, request: request, pacing: pacing)
      return (feed, nil, wholeSourceEncodings)
    }
    let visibility = visibility(of: scope)
    var projection = Projection<Section>.all
    projection.isIncluded = visibility.rows
    projection.isSectionIncluded = visibility.sections
    let entry: SharedViews<Scope, ScopeState>.Entry
    if let shared = scopes.acquire(scope) {
      entry = shared
    } else {
      viewsMade += 1
      // The scope's state follows the source in the lane of what its sessions show.
      let load = ScopeLoad()
      let start = Task.schedulable("starting a scope's state") {
        [source, history, steps] () -> Result<ProjectedDataSource<Section>, ProjectionError> in
        do throws(ProjectionError) {
          return .success(
            try await source.projected(
              projection, versions: .parent, history: history, steps: steps, lane: { load.lane }))
        } catch {
          return .failure(error)
        }
      }
      let state = ScopeState(
        stream: Self.viewStream(of: stream, query: nil, scope: scope), start: start,
        encodings: SharedEncodings(counting: resetsEncoded), load: load)
      entry = .init(view: state, number: viewsMade)
      scopes.add(scope, entry)
    }
    switch await entry.view.start.value {
    case .success(let projected):
      let feed = await projected.wireFeed(
        stream: queryStream ?? entry.view.stream, request: request, pacing: pacing)
      entry.view.load.add(views: views)
      let lease = Lease(
        scope: scope, number: entry.number, source: projected, load: entry.view.load, views: views)
      return (feed, lease, entry.view.encodings)
    case .failure:
      _ = scopes.release(scope, number: entry.number, keep: false)
      // The rule's error may name a row: the client learns only that its scope failed.
      throw WireError(.queryFailed, "the query of this scope could not be evaluated")
    }
  }

  /// The stream name of the view for (`query`, `scope`): the same in every process that serves `stream`
  /// with the same queries, so a client resumes a view on any instance of a service. A view numbers its
  /// batches with the source's versions, so two views with one key show the same rows at every version.
  /// - Complexity: O(size of the query's parameters and the scope's description).
  static func viewStream(of stream: String, query: WireQueryRequest?, scope: Scope) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let request = query.flatMap { try? encoder.encode($0) } ?? Data()
    let hash = FNV1a64.hash(request + Data("|\(String(reflecting: scope))".utf8))
    return "\(stream).v" + String(hash, radix: 16)
  }

  // MARK: - Edits

  /// Makes `edit` for a client of `scope` with the writer, once per (scope, edit id): an id this scope had
  /// answered recently (or is making) gets that answer when the edit is the same, and is refused with
  /// ``WireError/Code-swift.struct/editIDReused`` when it asks for something else; the same id from another
  /// scope is another edit.
  /// - Complexity: O(1) besides the writer; O(*s*) in the edit's size for an id answered before.
  nonisolated func write(_ edit: WireEdit<Section>, scope: Scope) async -> Result<Int, WireError> {
    guard let writer else { return .failure(WireError(.editNotMade, "this server takes no edits")) }
    let key = EditKey(scope: scope, id: edit.id)
    while true {
      let operations = edit.operations
      let started = answers.withLock {
        $0.start(key, operations) { ($0 as? [WireOperation<Section>]) == operations }
      }
      let ticket: EditAnswers<EditKey, CheckedContinuation<Result<Int, WireError>?, Never>>.Ticket
      switch started {
      case .answered(let answer): return answer
      case .reused: return .failure(edit.reused)
      case .inFlight:
        // Made by another call now (a resend that raced its first delivery): wait for that answer.
        let waited = await withCheckedContinuation {
          (waiter: CheckedContinuation<Result<Int, WireError>?, Never>) in
          switch answers.withLock({ $0.wait(key, waiter) }) {
          case .parked: break
          case .answered(let answer): waiter.resume(returning: answer)
          case .startAgain: waiter.resume(returning: nil)
          }
        }
        if let waited { return waited }
        // The first call went away without making it: this one makes it.
        continue
      case .make(let made):
        ticket = made
      }
      // Made in this call, not a task of its own: an edit costs one hop to the writer and back.
      let answer: Result<Int, WireError>
      do throws(WireError) {
        answer = .success(try await writer.write(edit, scope, visibility(of: scope)))
      } catch {
        answer = .failure(error)
      }
      // The caller went away before its group took the edit: not made, so a resend must make it. Or the
      // writer's storage holds another edit under the id: that edit's resend must still get its answer.
      var keep = true
      if case .failure(let error) = answer, Task.isCancelled || error.code == .editIDReused { keep = false }
      for waiter in answers.withLock({ $0.answered(key, at: ticket, answer, keep: keep) }) {
        waiter.resume(returning: answer)
      }
      return answer
    }
  }

  /// What a client of `scope` may see: the service's rules for that scope.
  /// - Complexity: O(1) besides the rules.
  nonisolated func visibility(of scope: Scope) -> WireVisibility<Section> {
    WireVisibility(sections: sections?(scope), rows: rows?(scope))
  }

  /// A session closed: it no longer counts against its scope's ``WireLimits/subscriptionsPerScope``.
  /// - Complexity: O(1) expected.
  func leave(_ session: Int) { admissions.leave(session) }

  /// A session stops using what `opened` holds: its feed ends, and its scope's state and views are
  /// released.
  /// - Complexity: O(*v* × idle views kept) for *v* views.
  func abandon(_ opened: Opened) {
    opened.feed.cancel()
    if let lease = opened.lease { release(lease) }
    release(opened.viewLeases)
  }

  /// A session stops following its scope's state.
  /// - Complexity: O(idle states kept).
  func release(_ lease: Lease) {
    lease.load.remove(views: lease.views)
    // Evicted states are dropped here: their projections stop following the source.
    _ = scopes.release(lease.scope, number: lease.number)
  }

  /// The shared projections of `requested` views (by the client's names for them) for a session of
  /// `scope`: the view of each (query, parameters, scope) is shared by every session that asks for it. Give
  /// them back with ``release(_:)-([ViewLease])``.
  /// - Throws: ``WireError``: `unknownQuery` or `invalidParameters`, naming the view of a subscribe of
  ///   several views; nothing is acquired then.
  /// - Complexity: O(*v*) for *v* views, besides their queries' parameter checks.
  private func acquireViews(
    _ requested: [String: WireQueryRequest?], scope: Scope, origin: String?
  ) throws(WireError) -> (
    views: [String: SharedViewSteps<Section>], leases: [ViewLease]
  ) {
    var projections: [String: (ViewKey, Projection<Section>)] = [:]
    for (name, query) in requested {
      guard let query else {
        projections[name] = (ViewKey(query: nil, scope: scope), .all)
        continue
      }
      let view = name.isEmpty ? "" : "view \(name): "
      guard let declared = queries[query.name] else {
        throw WireError(.unknownQuery, "\(view)no query is named \(query.name)")
      }
      projections[name] = (
        ViewKey(query: query, scope: scope), try declared.projection(for: query, scope: scope)
      )
    }
    var views: [String: SharedViewSteps<Section>] = [:]
    var leases: [ViewLease] = []
    for (name, (key, projection)) in projections {
      let entry: SharedViews<ViewKey, SharedViewSteps<Section>>.Entry
      if self.views.live[key] == nil { liveViewsPerScope[scope, default: []].insert(key) }
      if let shared = self.views.acquire(key) {
        entry = shared
      } else {
        viewsMade += 1
        let view = SharedViewSteps(
          projection, name: key.query?.name ?? "of this scope", steps: steps,
          encodings: SharedEncodings(counting: resetsEncoded))
        entry = .init(view: view, number: viewsMade)
        self.views.add(key, entry)
      }
      views[name] = entry.view
      leases.append(ViewLease(key: key, number: entry.number, origin: origin))
      if let origin { viewsOfOrigins[origin, default: [:]][key, default: 0] += 1 }
    }
    return (views, leases)
  }

  /// A session stops using views.
  /// - Complexity: O(*v* × idle views kept) for *v* views.
  func release(_ leases: [ViewLease]) {
    for lease in leases {
      if let origin = lease.origin, let held = viewsOfOrigins[origin]?[lease.key] {
        if held > 1 {
          viewsOfOrigins[origin]?[lease.key] = held - 1
        } else if viewsOfOrigins[origin]?.count == 1 {
          viewsOfOrigins[origin] = nil
        } else {
          viewsOfOrigins[origin]?[lease.key] = nil
        }
      }
      let wasLive = views.live[lease.key]?.entry.number == lease.number
      _ = views.release(lease.key, number: lease.number)
      guard wasLive, views.live[lease.key] == nil else { continue }
      let scope = lease.key.scope
      if let shown = liveViewsPerScope[scope], shown.count > 1 {
        liveViewsPerScope[scope]?.remove(lease.key)
      } else {
        liveViewsPerScope[scope] = nil
      }
    }
  }

  // MARK: - Budgets and rates

  /// `asked` with every query's parameters checked and in their canonical form
  /// (``WireQuery/canonicalRequest(for:)``); a query no one declares is left for ``acquireViews`` to refuse.
  /// - Complexity: O(parameters), besides the queries' `canonical`.
  private func canonical(_ asked: Asked) throws(WireError) -> Asked {
    func canonical(_ request: WireQueryRequest, view: String) throws(WireError) -> WireQueryRequest {
      guard let declared = queries[request.name] else { return request }
      do {
        return try declared.canonicalRequest(for: request)
      } catch {
        throw WireError(error.code, view + error.detail)
      }
    }
    switch asked {
    case .scope: return .scope
    case .query(let query): return .query(try canonical(query, view: ""))
    case .views(let requested):
      var views: [String: WireQueryRequest?] = [:]
      for (name, query) in requested {
        // `updateValue`: a view of the whole scope is a `nil` query, which a subscript would remove.
        views.updateValue(
          try query.map { (query) throws(WireError) in try canonical(query, view: "view \(name): ") },
          forKey: name)
      }
      return .views(views)
    }
  }

  /// Refuses a subscribe of `scope` whose views would take the scope past ``WireLimits/viewsPerScope`` or
  /// its origin past ``WireLimits/viewsPerOrigin`` (the views `leaving`, which the session gives up for
  /// these, are not counted when it alone shows them), one that adds views to a scope or origin whose views
  /// show ``WireLimits/rowsPerScope`` or ``WireLimits/rowsPerOrigin`` rows already, and one that makes more
  /// views no one holds than ``WireLimits/freshViews`` admits now.
  /// - Returns: The views the subscribe adds to its scope, by name, for ``checkRows(_:scope:origin:leaving:)``
  ///   once they are projected.
  /// - Throws: ``WireError/Code-swift.struct/limitReached`` naming the budget and the first view past it,
  ///   or ``WireError/Code-swift.struct/rateLimited``; nothing is taken from any rate then.
  /// - Complexity: O(*v*) for *v* views asked, left and shown by the scope and origin.
  private func checkBudget(
    _ named: [String: WireQueryRequest?], scope: Scope, origin: String?, leaving: [ViewLease]
  ) throws(WireError) -> [(name: String, key: ViewKey)] {
    var distinct = Set<ViewKey>()
    var added: [(name: String, key: ViewKey)] = []
    var fresh = 0
    for (name, query) in named.sorted(by: { $0.key < $1.key }) {
      let key = ViewKey(query: query, scope: scope)
      guard distinct.insert(key).inserted, views.live[key] == nil else { continue }
      added.append((name, key))
      if views.idle[key] == nil { fresh += 1 }
    }
    let freed = freed(by: leaving, of: scope, keeping: distinct)
    let held = (liveViewsPerScope[scope]?.count ?? 0) - freed.count
    if !added.isEmpty, held + added.count > limits.viewsPerScope {
      let past = added[min(added.count - 1, max(0, limits.viewsPerScope - held))]
      throw WireError(
        .limitReached,
        "\(Self.describe(past)): this scope shows \(limits.viewsPerScope) views (viewsPerScope), as many as the server allows"
      )
    }
    if let origin { try checkOriginBudget(named, scope: scope, origin: origin, leaving: leaving) }
    if let first = added.first {
      // Before projecting anything: a scope or origin at its budget of rows takes no new view.
      try checkRows(
        of: first, shownBy: scope, origin: origin, freed: freed, leaving: leaving, projected: false)
    }
    try freshViewRates.take(fresh, scope: scope, origin: origin, now: now(), jitter: jitter)
    return added
  }

  /// Refuses a subscribe whose views `added`, now projected, take its scope's views past
  /// ``WireLimits/rowsPerScope`` or its origin's past ``WireLimits/rowsPerOrigin`` (the views `leaving`
  /// are not counted when the session alone shows them).
  /// - Throws: ``WireError/Code-swift.struct/limitReached`` naming the budget and the first view added.
  /// - Complexity: O(*v*) for *v* views asked, left and shown by the scope and origin.
  private func checkRows(
    _ added: [(name: String, key: ViewKey)], scope: Scope, origin: String?, leaving: [ViewLease]
  ) throws(WireError) {
    guard let first = added.first else { return }
    let freed = freed(by: leaving, of: scope, keeping: Set(added.map(\.key)))
    // The views added are live now: counted in the scope's and origin's rows.
    try checkRows(
      of: first, shownBy: scope, origin: origin, freed: freed, leaving: leaving, projected: true)
  }

  /// The views of `scope` that a subscribe giving up `leaving` frees: those its session alone shows, and
  /// that it does not ask for again (`asked`).
  /// - Complexity: O(*v*) for *v* views left.
  private func freed(by leaving: [ViewLease], of scope: Scope, keeping asked: Set<ViewKey>) -> Set<ViewKey> {
    Set(leaving.map(\.key)).filter { key in
      key.scope == scope && !asked.contains(key) && views.live[key]?.users == 1
    }
  }

  /// Refuses `view` when the rows of the views its scope shows (less `freed`), or those its origin shows
  /// (less what `leaving` gives back), reach the budget before the new views are projected, or pass it
  /// once they are (`projected`: counted with the others).
  /// - Complexity: O(*v*) for *v* views shown by the scope and origin and left.
  private func checkRows(
    of view: (name: String, key: ViewKey), shownBy scope: Scope, origin: String?, freed: Set<ViewKey>,
    leaving: [ViewLease], projected: Bool
  ) throws(WireError) {
    func refusal(_ whose: String, _ rows: Int, _ limit: Int, _ budget: String) -> WireError? {
      if projected ? rows <= limit : rows < limit { return nil }
      let shown =
        projected
        ? "would show \(rows) rows, past the \(limit) the server allows (\(budget))"
        : "show \(rows) rows, as many as the server allows (\(budget) \(limit))"
      return WireError(.limitReached, "\(Self.describe(view)): \(whose) views \(shown)")
    }
    let scopeRows = rows(of: (liveViewsPerScope[scope] ?? []).subtracting(freed))
    if let refused = refusal("this scope's", scopeRows, limits.rowsPerScope, "rowsPerScope") { throw refused }
    guard let origin, let shown = viewsOfOrigins[origin] else { return }
    var leaves: [ViewKey: Int] = [:]
    for lease in leaving where lease.origin == origin { leaves[lease.key, default: 0] += 1 }
    let originRows = rows(of: shown.keys.filter { key in leaves[key] != shown[key] })
    if let refused = refusal("this address's", originRows, limits.rowsPerOrigin, "rowsPerOrigin") {
      throw refused
    }
  }

  /// The rows the live views `keys` show together (each view's newest state).
  /// - Complexity: O(*v*) for *v* keys.
  private func rows(of keys: some Sequence<ViewKey>) -> Int {
    keys.reduce(0) { total, key in total + (views.live[key]?.entry.view.rows ?? 0) }
  }

  /// A view of a subscribe, as its errors name it: the query of a format-2 subscribe, or the view's name.
  private static func describe(_ view: (name: String, key: ViewKey)) -> String {
    view.name.isEmpty ? "the query \(view.key.query?.name ?? "")" : "view \(view.name)"
  }

  /// Refuses a subscribe from `origin` whose views would take the views its sessions show past
  /// ``WireLimits/viewsPerOrigin`` (a view `leaving` does not count when it is the origin's last lease of it).
  /// - Throws: ``WireError/Code-swift.struct/limitReached`` naming the budget and the first view past it.
  /// - Complexity: O(*v*) for *v* views asked and left.
  private func checkOriginBudget(
    _ named: [String: WireQueryRequest?], scope: Scope, origin: String, leaving: [ViewLease]
  ) throws(WireError) {
    let shown = viewsOfOrigins[origin] ?? [:]
    var distinct = Set<ViewKey>()
    var added: [String] = []
    for (name, query) in named.sorted(by: { $0.key < $1.key }) {
      let key = ViewKey(query: query, scope: scope)
      guard distinct.insert(key).inserted, shown[key] == nil else { continue }
      added.append(name.isEmpty ? "the query \(query?.name ?? "")" : "view \(name)")
    }
    guard !added.isEmpty else { return }
    var leaves: [ViewKey: Int] = [:]
    for lease in leaving where lease.origin == origin { leaves[lease.key, default: 0] += 1 }
    let freed = leaves.filter { key, count in !distinct.contains(key) && shown[key] == count }.count
    let held = shown.count - freed
    guard held + added.count > limits.viewsPerOrigin else { return }
    throw WireError(
      .limitReached,
      "\(added[min(added.count - 1, max(0, limits.viewsPerOrigin - held))]): this address shows \(limits.viewsPerOrigin) views (viewsPerOrigin), as many as the server allows"
    )
  }
}

extension WireService where Scope == NoScope {
  /// Serves `source` to clients that may all see every row.
  /// - Parameters:
  ///   - source: The source served.
  ///   - stream: The source's stream name: unique per run of a source that counts versions anew, the same
  ///     in every instance that follows one log.
  ///   - queries: The queries clients may name; their names must differ.
  ///   - keepingIdleViews: How many query views no session uses are kept, so that their clients resume.
  ///   - history: How many versions each query view retains for clients that resume.
  ///   - limits: What the one scope may cost. Every client of a service with no scope shares it, so by
  ///     default (``WireLimits/unscoped``) only the views per subscribe are limited: limit per address or
  ///     user in the transport.
  ///   - edits: Makes the edits clients send; `nil` refuses them.
  public init<Source: DataSourceType>(
    source: Source, stream: String, queries: [WireQuery<Section>] = [], keepingIdleViews: Int = 16,
    history: HistoryLimit = .default, limits: WireLimits = .unscoped,
    edits: WireWriter<Section, Scope>? = nil
  ) where Source.Section == Section {
    self.init(
      serving: source, stream: stream, queries: queries, keepingIdleViews: keepingIdleViews, history: history,
      limits: limits, edits: edits, sections: nil, rows: nil)
  }

  /// A session for one connection; see ``session(scope:origin:pacing:sink:send:)``.
  public nonisolated func session(
    pacing: Pacing = .immediate, sink: WireSink? = nil, send: @escaping @Sendable (Data) async throws -> Void
  ) -> WireSession<Section, NoScope> {
    session(scope: NoScope(), pacing: pacing, sink: sink, send: send)
  }
}

/// What the sessions that follow one scope's state show: how many follow it, and their views in all. The
/// scope's state follows the source in the lane of its sessions' views, on average, rounded up
/// (``SubscriptionLane``): a scope whose clients follow its state as it is comes before one whose clients
/// each show many views, whose projections and messages cost the publish more per client.
final class ScopeLoad: Sendable {
  private let counts = Locked((sessions: 0, views: 0))

  /// A session follows the scope's state, showing `views` views (none: the state as it is).
  /// - Complexity: O(1).
  func add(views: Int) { counts.withLock { ($0.sessions, $0.views) = ($0.sessions + 1, $0.views + views) } }

  /// A session counted by ``add(views:)`` stops following it.
  /// - Complexity: O(1).
  func remove(views: Int) {
    counts.withLock { ($0.sessions, $0.views) = ($0.sessions - 1, $0.views - views) }
  }

  /// The lane of the sessions' views on average, rounded up; the first with no session.
  /// - Complexity: O(1).
  var lane: SubscriptionLane {
    counts.withLock { counts in
      counts.sessions <= 0 ? .first : SubscriptionLane((counts.views + counts.sessions - 1) / counts.sessions)
    }
  }
}
