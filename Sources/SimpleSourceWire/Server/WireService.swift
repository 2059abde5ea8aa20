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
/// Make one per source, then a ``WireSession`` per connection with ``session(scope:pacing:sink:send:)``:
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
/// - **Shared work.** Sessions with the same (query, parameters, scope) share one ``ProjectedDataSource``
///   of the source and one encoded message per batch: an edit costs each distinct view O(*k* log *n*) and
///   each further client a copy of bytes, or with a ``WireSink`` one call of its sink from the view's
///   publisher (no task woken per client). A reset is encoded once per (view, version, format) too. The
///   views of a subscribe of several views (format 3) are shared per (query, parameters, scope) as well:
///   a batch is projected once per distinct view, and its message encoded once per set of views. The last
///   session to leave a view keeps it idle for resumes; the `keepingIdleViews` most recently used idle
///   views are kept, and older ones are dropped.
/// - **Streams.** The whole source, with no scope, is `stream`; each view's stream is `stream` followed by
///   `.v` and a stable hash of its query, parameters and scope, the same
///   on every instance serving `stream`. A client resumes a view from any version the source retains, even
///   on an instance that makes the view only then (``ProjectedDataSource/subscribe(from:pacing:)``), and
///   resets otherwise. Make `stream` unique per source history (a restart that loses it must change it).
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

  // Guard map: `admissions`, the views (`views`, `viewsMade`) and the edit answers (`answers`,
  // `answerOrder`, `oldestAnswer`, `awaiting`) are the actor's. The counters `sessionsMade` and
  // `resetsEncoded` are locks of their own, taken alone; each shared view's encodings are behind its
  // own locks. A view is started by one task (its `start`), which every session opening the view awaits,
  // so it is projected once however many sessions race; an edit is made in its caller's task, and a
  // resend of an edit being made waits on the actor for that answer.
  /// The whole source's stream name; views' streams start with it.
  public nonisolated let stream: String
  /// The source served.
  public nonisolated let source: any DataSourceType<Section>
  /// The queries clients may name, by name.
  public nonisolated let queries: [String: WireQuery<Section>]
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
  /// The answers to the newest edits, by the scope that made them and their id, with the operations of the
  /// edit each answers (a resend is answered only when it asks for the same, as its fingerprint would say); their keys in a ring whose oldest is at
  /// `oldestAnswer`. An answer still being made is `nil`; the callers of the same edit meanwhile wait in
  /// `awaiting`, which forgetting old answers never touches.
  var answers: [EditKey: (operations: [WireOperation<Section>], answer: Result<Int, WireError>?)] = [:]
  var answerOrder: [EditKey] = []
  var oldestAnswer = 0
  var awaiting: [EditKey: [CheckedContinuation<Result<Int, WireError>, Never>]] = [:]
  /// How many edits' answers are remembered.
  static var rememberedEdits: Int { 4_096 }
  /// The views sessions use, and the idle ones kept.
  var views: SharedViews<ViewKey, SharedView>
  /// The number of the last view made.
  var viewsMade = 0
  /// The views of subscribes of several views (format 3), projected once per (query, scope) for the
  /// sessions that use them, and the idle ones kept.
  var viewSteps: SharedViews<ViewKey, SharedViewSteps<Section>>

  /// Serves `source` to clients whose scope restricts the rows they see.
  /// - Parameters:
  ///   - source: The source served.
  ///   - stream: The source's stream name: unique per run of a source that counts versions anew, the same
  ///     in every instance that follows one log.
  ///   - queries: The queries clients may name; their names must differ.
  ///   - keepingIdleViews: How many views no session uses are kept, so that their clients resume.
  ///   - history: How many versions each view retains for clients that resume (the whole source retains
  ///     its own).
  ///   - limits: What each scope may hold: subscribed connections, views per subscribe.
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
  ///   - keepingIdleViews: How many views no session uses are kept, so that their clients resume.
  ///   - history: How many versions each view retains for clients that resume (the whole source retains
  ///     its own).
  ///   - limits: What each scope may hold: subscribed connections, views per subscribe.
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
    self.rows = rows
    self.sections = sections
    views = SharedViews(idleLimit: keepingIdleViews)
    viewSteps = SharedViews(idleLimit: keepingIdleViews)
  }

  /// A session for one connection of a client whose scope is `scope`; see ``WireSession``.
  /// - Parameters:
  ///   - scope: What the client may see.
  ///   - pacing: How often the client receives batches.
  ///   - sink: Writes a message without waiting, when the transport can (see ``WireSink``): between
  ///     batches the session's sending task parks with it, and the view's publisher hands each batch,
  ///     encoded once per view and format, to the sink of every session that holds the version before
  ///     it, instead of waking a task per client to send it. A sink that returns `false` (a full
  ///     connection) wakes the session's task, which sends that batch through `send` (which waits), and
  ///     any catch-up after it, then parks with its sink again. The transport queues both in one order: a
  ///     message given to either before another reaches the client first (an edit's answer follows its
  ///     batch, a batch follows the reset). Paced sessions never use it. `nil`: every message goes
  ///     through `send`.
  ///   - send: Sends one message's bytes (JSON text) to the client; throwing ends the subscription.
  public nonisolated func session(
    scope: Scope, pacing: Pacing = .immediate, sink: WireSink? = nil,
    send: @escaping @Sendable (Data) async throws -> Void
  ) -> WireSession<Section, Scope> {
    WireSession(service: self, scope: scope, pacing: pacing, sink: sink, send: send)
  }

  /// The number of views sessions use now.
  package var liveViewCount: Int { views.live.count }
  /// The number of views kept idle for resumes.
  package var idleViewCount: Int { views.idle.count }
  /// The views of subscribes of several views that sessions use now, and how many states and steps they
  /// made in all (tests read it: sessions in step share them).
  package var liveViewSteps: (views: Int, projected: Int) {
    let shared = viewSteps.live.values.map(\.entry.view)
    return (shared.count, shared.reduce(0) { $0 + $1.projected.withLock { $0 } })
  }

  // MARK: - Views

  /// What a view is shared by: the query asked for and the scope.
  struct ViewKey: Hashable {
    var query: WireQueryRequest?
    var scope: Scope
  }

  /// A view of the source: its stream, the projection once it has started, and its newest reset and
  /// batch, encoded.
  final class SharedView: Sendable {
    let stream: String
    let start: Task<Result<ProjectedDataSource<Section>, ProjectionError>, Never>
    let encodings: SharedEncodings

    init(
      stream: String, start: Task<Result<ProjectedDataSource<Section>, ProjectionError>, Never>,
      encodings: SharedEncodings
    ) {
      self.stream = stream
      self.start = start
      self.encodings = encodings
    }
  }

  /// A session's use of a view, given back with ``release(_:)``.
  struct Lease: Sendable {
    let key: ViewKey
    let number: Int
    /// Keeps the view's source alive while the session follows it.
    let source: ProjectedDataSource<Section>
  }

  /// A session's use of a view of a subscribe of several views, given back with ``release(_:)-([StepsLease])``.
  struct StepsLease: Sendable {
    let key: ViewKey
    let number: Int
  }

  /// A subscribe's feed, the views it uses (if any), and where its encodings are shared.
  struct Opened: Sendable {
    let feed: WireFeed<Section>
    let lease: Lease?
    let encodings: SharedEncodings
    /// The views of a subscribe of several views, projected from `feed`.
    var stepsLeases: [StepsLease] = []
  }

  /// The feed for a client's subscribe, and the view it uses, if any.
  /// - Throws: ``WireError``: ``WireError/Code-swift.struct/unknownQuery``,
  ///   ``WireError/Code-swift.struct/invalidParameters`` or ``WireError/Code-swift.struct/queryFailed``.
  /// - Complexity: a view shared already: as ``DataSourceType/wireFeed(stream:request:pacing:)``; a new one:
  ///   O(*n*) predicate calls to project the source.
  func open(
    stream requested: String?, from: Int?, query: WireQueryRequest?, scope: Scope, pacing: Pacing,
    session: Int
  ) async throws(WireError) -> Opened {
    let counted = admissions.scope(of: session)
    guard admissions.admit(session, to: scope, limit: limits.subscriptionsPerScope) else {
      throw WireError(
        .limitReached,
        "this scope holds \(limits.subscriptionsPerScope) subscribed connections, as many as the server allows"
      )
    }
    do throws(WireError) {
      return try await openAdmitted(stream: requested, from: from, query: query, scope: scope, pacing: pacing)
    } catch {
      // A refused subscribe changes nothing: the session counts where it counted before.
      admissions.restore(session, to: counted)
      throw error
    }
  }

  /// ``open(stream:from:query:scope:pacing:session:)`` for a session counted in `scope`.
  private func openAdmitted(
    stream requested: String?, from: Int?, query: WireQueryRequest?, scope: Scope, pacing: Pacing
  ) async throws(WireError) -> Opened {
    guard query != nil || rows != nil || sections != nil else {
      let feed = await source.wireFeed(stream: stream, request: (requested, from), pacing: pacing)
      return Opened(feed: feed, lease: nil, encodings: wholeSourceEncodings)
    }
    var projection = Projection<Section>.all
    if let query {
      guard let declared = queries[query.name] else {
        throw WireError(.unknownQuery, "no query is named \(query.name)")
      }
      projection = try declared.projection(for: query, scope: scope)
    }
    let visibility = visibility(of: scope)
    if let visible = visibility.rows {
      let asked = projection.isIncluded
      projection.isIncluded = { item in visible(item) ? try asked?(item) ?? true : false }
    }
    if let visible = visibility.sections {
      let asked = projection.isSectionIncluded
      projection.isSectionIncluded = { section in visible(section) ? try asked?(section) ?? true : false }
    }
    let key = ViewKey(query: query, scope: scope)
    let entry: SharedViews<ViewKey, SharedView>.Entry
    if let shared = views.acquire(key) {
      entry = shared
    } else {
      viewsMade += 1
      let start = Task.schedulable("starting a live query") {
        [source] () -> Result<ProjectedDataSource<Section>, ProjectionError> in
        do throws(ProjectionError) {
          return .success(try await source.projected(projection, versions: .parent, history: history))
        } catch {
          return .failure(error)
        }
      }
      let view = SharedView(
        stream: Self.viewStream(of: stream, query: query, scope: scope), start: start,
        encodings: SharedEncodings(counting: resetsEncoded))
      entry = .init(view: view, number: viewsMade)
      views.add(key, entry)
    }
    switch await entry.view.start.value {
    case .success(let projected):
      let feed = await projected.wireFeed(
        stream: entry.view.stream, request: (requested, from), pacing: pacing)
      return Opened(
        feed: feed, lease: Lease(key: key, number: entry.number, source: projected),
        encodings: entry.view.encodings)
    case .failure:
      _ = views.release(key, number: entry.number, keep: false)
      // The projection's error may name a row: the client learns only which query failed.
      throw WireError(.queryFailed, "the query \(query?.name ?? "of this scope") could not be evaluated")
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
    // FNV-1a, 64 bits: stable across processes, unlike `hashValue`.
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in request + Data("|\(String(reflecting: scope))".utf8) {
      hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
    return "\(stream).v" + String(hash, radix: 16)
  }

  // MARK: - Edits

  /// Whose edit an answer is: the scope that made it, and the id its client gave it.
  struct EditKey: Hashable {
    var scope: Scope
    var id: String
  }

  /// Makes `edit` for a client of `scope` with the writer, once per (scope, edit id): an id this scope had
  /// answered recently (or is making) gets that answer when the edit is the same, and is refused with
  /// ``WireError/Code-swift.struct/editIDReused`` when it asks for something else; the same id from another
  /// scope is another edit.
  /// - Complexity: O(1) besides the writer; O(*s*) in the edit's size for an id answered before.
  func write(_ edit: WireEdit<Section>, scope: Scope) async -> Result<Int, WireError> {
    guard let writer else { return .failure(WireError(.editNotMade, "this server takes no edits")) }
    let key = EditKey(scope: scope, id: edit.id)
    if let (made, answer) = answers[key] {
      guard made == edit.operations else { return .failure(edit.reused) }
      if let answer { return answer }
      // Made by another call now (a resend that raced its first delivery): wait for that answer.
      return await withCheckedContinuation { awaiting[key, default: []].append($0) }
    }
    answers[key] = (edit.operations, nil)
    if answerOrder.count < Self.rememberedEdits {
      answerOrder.append(key)
    } else {
      // A ring: the oldest key gives way to the newest.
      answers[answerOrder[oldestAnswer]] = nil
      answerOrder[oldestAnswer] = key
      oldestAnswer = (oldestAnswer + 1) % Self.rememberedEdits
    }
    // Made in this call, not a task of its own: an edit costs one hop to the writer and back.
    let answer: Result<Int, WireError>
    do throws(WireError) {
      answer = .success(try await writer.write(edit, scope, visibility(of: scope)))
    } catch {
      answer = .failure(error)
    }
    if case .failure(let error) = answer, Task.isCancelled || error.code == .editIDReused {
      // The caller went away before its group took the edit: not made, so a resend must make it. Or the
      // writer's storage holds another edit under the id: that edit's resend must still get its answer.
      answers[key] = nil
    } else if answers[key] != nil {
      // Forgotten meanwhile (4,096 newer edits), the answer is not kept; its waiters still get it.
      answers[key]?.answer = answer
    }
    for waiter in awaiting.removeValue(forKey: key) ?? [] { waiter.resume(returning: answer) }
    return answer
  }

  /// What a client of `scope` may see: the service's rules for that scope.
  /// - Complexity: O(1) besides the rules.
  nonisolated func visibility(of scope: Scope) -> WireVisibility<Section> {
    WireVisibility(sections: sections?(scope), rows: rows?(scope))
  }

  /// A session closed: it no longer counts against its scope's ``WireLimits/subscriptionsPerScope``.
  /// - Complexity: O(1) expected.
  func leave(_ session: Int) { admissions.leave(session) }

  /// A session stops using a view.
  /// - Complexity: O(idle views kept).
  func release(_ lease: Lease) {
    // Evicted views are dropped here: their projections stop following the source.
    _ = views.release(lease.key, number: lease.number)
  }

  /// The shared projections of the views of one subscribe of several views (format 3) by a session of
  /// `scope`, by the client's names for them: the view of each (query, parameters, scope) is shared by
  /// every session that asks for it. Give them back with ``release(_:)-([StepsLease])``.
  /// - Throws: ``WireError``: `unknownQuery` or `invalidParameters` for a view, naming it; nothing is
  ///   acquired then.
  /// - Complexity: O(*v*) for *v* views, besides their queries' parameter checks.
  func viewSteps(for requested: [String: WireQueryRequest?], scope: Scope) throws(WireError) -> (
    views: [String: SharedViewSteps<Section>], leases: [StepsLease]
  ) {
    var projections: [String: (ViewKey, Projection<Section>)] = [:]
    for (name, query) in requested {
      guard let query else {
        projections[name] = (ViewKey(query: nil, scope: scope), .all)
        continue
      }
      guard let declared = queries[query.name] else {
        throw WireError(.unknownQuery, "view \(name): no query is named \(query.name)")
      }
      projections[name] = (
        ViewKey(query: query, scope: scope), try declared.projection(for: query, scope: scope)
      )
    }
    var views: [String: SharedViewSteps<Section>] = [:]
    var leases: [StepsLease] = []
    for (name, (key, projection)) in projections {
      let entry: SharedViews<ViewKey, SharedViewSteps<Section>>.Entry
      if let shared = viewSteps.acquire(key) {
        entry = shared
      } else {
        viewsMade += 1
        entry = .init(view: SharedViewSteps(projection), number: viewsMade)
        viewSteps.add(key, entry)
      }
      views[name] = entry.view
      leases.append(StepsLease(key: key, number: entry.number))
    }
    return (views, leases)
  }

  /// A session stops using the views of a subscribe of several views.
  /// - Complexity: O(*v* × idle views kept) for *v* views.
  func release(_ leases: [StepsLease]) {
    for lease in leases { _ = viewSteps.release(lease.key, number: lease.number) }
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
  ///   - limits: How many connections may be subscribed at once, and views per subscribe. Every client of
  ///     a service with no scope shares one scope, so by default the subscriptions are not limited.
  ///   - edits: Makes the edits clients send; `nil` refuses them.
  public init<Source: DataSourceType>(
    source: Source, stream: String, queries: [WireQuery<Section>] = [], keepingIdleViews: Int = 16,
    history: HistoryLimit = .default, limits: WireLimits = WireLimits(subscriptionsPerScope: .max),
    edits: WireWriter<Section, Scope>? = nil
  ) where Source.Section == Section {
    self.init(
      serving: source, stream: stream, queries: queries, keepingIdleViews: keepingIdleViews, history: history,
      limits: limits, edits: edits, sections: nil, rows: nil)
  }

  /// A session for one connection; see ``session(scope:pacing:sink:send:)``.
  public nonisolated func session(
    pacing: Pacing = .immediate, sink: WireSink? = nil, send: @escaping @Sendable (Data) async throws -> Void
  ) -> WireSession<Section, NoScope> {
    session(scope: NoScope(), pacing: pacing, sink: sink, send: send)
  }
}
