// What one scope (and one origin) may hold of a service and how fast: connections, views, rows, rates.

/// The limits a ``WireService`` holds every scope to, so that one user's connections cannot slow the
/// others: past a count, a subscribe is refused with ``WireError/Code-swift.struct/limitReached``; past a
/// rate, with ``WireError/Code-swift.struct/rateLimited`` and a ``WireError/retryAfter``. Nothing else
/// changes either way.
///
/// ```swift
/// let limits = WireLimits(
///   subscriptionsPerScope: 8, viewsPerScope: 32,
///   subscribes: WireRate(perSecond: 1, burst: 8), freshViews: WireRate(perSecond: 4, burst: 32))
/// ```
///
/// A service with no scope (``NoScope``) has one scope for every client: its default limits nothing but
/// the views per subscribe. A service whose scope some clients share (guests, a tenant) sets limits that
/// fit them.
///
/// What a scope may cost is bounded four ways:
/// - **Connections**: a connection counts against its scope from its first accepted subscribe until it
///   closes (``WireSession/close()``), or until ``WireSession/setScope(_:)`` moves it to another scope.
/// - **Views**: sessions of one scope that ask for the same view (in any format, and in any spelling the
///   query folds: see ``WireQuery/init(_:parameters:canonical:make:)``) share it, so what a view costs
///   per write (stepping it through each batch) is paid once per scope. ``viewsPerScope`` bounds the
///   distinct views a scope's sessions show at once, and ``viewsPerOrigin`` those the sessions of one
///   origin show, whatever their scopes (so that one address cannot spread its views over many users); a
///   subscribe that would show more is refused and names the first view past the budget. A view no session shows any more is returned at once, or kept
///   among the service's idle views (`keepingIdleViews`, shared by every scope) for a client that resumes.
/// - **Rows**: what a view costs depends on what it matches: its state holds every row it shows, and each
///   write steps it. ``rowsPerScope`` bounds the rows a scope's distinct views show together, and
///   ``rowsPerOrigin`` those of an origin's views, so that views that each match the whole scope (`s`,
///   `ss`, ..., distinct in every spelling) cannot multiply it. A view's rows are those of its newest state
///   (counted when it is projected and at each step). A subscribe that adds views is refused when its
///   scope's or origin's views show the budget or more already, and, when it starts from a reset, also
///   when its new views, once projected, take them past it; it names the first of its views past the
///   budget. A resume learns a new view's rows at its first step, so it can take a scope past the budget
///   by its own views; the next subscribe that adds views is refused. Rows that grow after a view was
///   admitted (writes that add matching rows) are not refused; they count against the next subscribe.
/// - **Rates**: ``subscribes`` bounds the subscribes a scope makes (accepted or not), and ``freshViews``
///   the views its subscribes make that no session holds and none is kept idle, each of which is projected
///   from the whole scope, O(*n*); a resume of such a view counts as one, since it costs the same.
///   ``subscribesPerOrigin`` and ``freshViewsPerOrigin`` bound the same per origin (the client's address,
///   given to ``WireService/session(scope:origin:pacing:sink:send:)``), whatever the scopes. Past any, the
///   subscribe is refused with a retry-after: the time until the rates admit it, plus a random jitter of
///   up to half of it, so that refused clients do not come back together. A subscribe one rate refuses
///   takes nothing from the others; one refused later (an unknown query, a full scope) has spent what it
///   took, as the work it asked for would have.
public struct WireLimits: Hashable, Sendable {
  /// The most connections of one scope that may be subscribed at once.
  public var subscriptionsPerScope: Int
  /// The most views one subscribe of several views (format 3) may name.
  public var viewsPerSubscribe: Int
  /// The most distinct views one scope's sessions may show at once (a query with its canonical
  /// parameters, or the whole scope).
  public var viewsPerScope: Int
  /// The most distinct views the sessions of one origin (``WireService/session(scope:origin:pacing:sink:send:)``)
  /// may show at once, whatever their scopes: a view several of its sessions show counts once.
  public var viewsPerOrigin: Int
  /// The most rows one scope's distinct views may show together, each counted once however many sessions
  /// show it.
  public var rowsPerScope: Int
  /// The most rows the distinct views the sessions of one origin show may hold together, whatever their
  /// scopes.
  public var rowsPerOrigin: Int
  /// The subscribes one scope may make, accepted or not; `nil`: any number.
  public var subscribes: WireRate?
  /// The views one scope's subscribes may make that no session holds and none is kept idle; `nil`: any
  /// number.
  public var freshViews: WireRate?
  /// The subscribes the sessions of one origin (``WireService/session(scope:origin:pacing:sink:send:)``)
  /// may make, whatever their scopes; `nil`: any number.
  public var subscribesPerOrigin: WireRate?
  /// The views no one holds that the sessions of one origin may make, whatever their scopes; `nil`: any
  /// number.
  public var freshViewsPerOrigin: WireRate?

  /// Creates limits.
  /// - Parameters:
  ///   - subscriptionsPerScope: The most connections of one scope subscribed at once; 64 by default.
  ///   - viewsPerSubscribe: The most views one subscribe may name; 16 by default.
  ///   - viewsPerScope: The most distinct views one scope shows at once; 64 by default.
  ///   - viewsPerOrigin: The most distinct views one origin's sessions show at once, whatever their
  ///     scopes; 128 by default (an address may be several users').
  ///   - rowsPerScope: The most rows one scope's distinct views show together; 1,048,576 by default (tens
  ///     of views of a scope of ten thousand rows, each matching all of it, or a few of a larger one).
  ///   - rowsPerOrigin: The most rows one origin's distinct views show together; 2,097,152 by default.
  ///   - subscribes: The subscribes one scope may make; 4 a second with bursts of 64 by default, so that
  ///     every connection of a scope may resubscribe at once after a restart.
  ///   - freshViews: The views no session holds that one scope's subscribes may make; 8 a second with
  ///     bursts of 64 by default.
  ///   - subscribesPerOrigin: The subscribes of one origin's sessions; 8 a second with bursts of 128 by
  ///     default (an address may be several users').
  ///   - freshViewsPerOrigin: The views no one holds that one origin's sessions may make; 16 a second with
  ///     bursts of 128 by default.
  public init(
    subscriptionsPerScope: Int = 64, viewsPerSubscribe: Int = 16, viewsPerScope: Int = 64,
    viewsPerOrigin: Int = 128, rowsPerScope: Int = 1 << 20, rowsPerOrigin: Int = 1 << 21,
    subscribes: WireRate? = WireRate(perSecond: 4, burst: 64),
    freshViews: WireRate? = WireRate(perSecond: 8, burst: 64),
    subscribesPerOrigin: WireRate? = WireRate(perSecond: 8, burst: 128),
    freshViewsPerOrigin: WireRate? = WireRate(perSecond: 16, burst: 128)
  ) {
    self.subscriptionsPerScope = subscriptionsPerScope
    self.viewsPerSubscribe = viewsPerSubscribe
    self.viewsPerScope = viewsPerScope
    self.viewsPerOrigin = viewsPerOrigin
    self.rowsPerScope = rowsPerScope
    self.rowsPerOrigin = rowsPerOrigin
    self.subscribes = subscribes
    self.freshViews = freshViews
    self.subscribesPerOrigin = subscribesPerOrigin
    self.freshViewsPerOrigin = freshViewsPerOrigin
  }

  /// No count, budget or rate per scope but the views per subscribe, and the default budgets and rates per
  /// origin: the default of a service with no scope, whose clients all share one scope (a rate per scope
  /// would let one client use up every other's). Give sessions their origin to rate them.
  public static var unscoped: WireLimits {
    WireLimits(
      subscriptionsPerScope: .max, viewsPerScope: .max, rowsPerScope: .max, subscribes: nil, freshViews: nil)
  }
}

/// The subscribed sessions of each scope, counted against ``WireLimits/subscriptionsPerScope``.
struct ScopeAdmissions<Scope: Hashable, Session: Hashable> {
  private(set) var sessions: [Scope: Set<Session>] = [:]
  private var scopes: [Session: Scope] = [:]

  /// The scope `session` is counted in, if any.
  func scope(of session: Session) -> Scope? { scopes[session] }

  /// Counts `session` in `scope` (leaving the scope it was counted in), unless `scope` already holds
  /// `limit` other sessions; returns whether it is counted there.
  /// - Complexity: O(1) expected.
  mutating func admit(_ session: Session, to scope: Scope, limit: Int) -> Bool {
    if scopes[session] == scope { return true }
    guard sessions[scope, default: []].count < limit else { return false }
    leave(session)
    sessions[scope, default: []].insert(session)
    scopes[session] = scope
    return true
  }

  /// Counts `session` in `scope` again, or nowhere: undoes an ``admit(_:to:limit:)`` whose subscribe
  /// failed.
  /// - Complexity: O(1) expected.
  mutating func restore(_ session: Session, to scope: Scope?) {
    leave(session)
    guard let scope else { return }
    sessions[scope, default: []].insert(session)
    scopes[session] = scope
  }

  /// Stops counting `session`.
  /// - Complexity: O(1) expected.
  mutating func leave(_ session: Session) {
    guard let scope = scopes.removeValue(forKey: session) else { return }
    sessions[scope]?.remove(session)
    if sessions[scope]?.isEmpty == true { sessions[scope] = nil }
  }
}
