// What one scope may hold of a service: subscribed connections, and views per subscribe.

/// The limits a ``WireService`` holds every scope to, so that one user's connections cannot slow the
/// others: past them, a subscribe is refused with ``WireError/Code-swift.struct/limitReached``, and
/// nothing else changes.
///
/// A service with no scope (``NoScope``) has one scope for every client: its default does not limit
/// subscriptions. A service whose scope some clients share (guests, a tenant) sets limits that fit them.
///
/// A connection counts against its scope from its first accepted subscribe until it closes
/// (``WireSession/close()``), or until ``WireSession/setScope(_:)`` moves it to another scope. Sessions
/// of one scope share its state, and those that ask for the same query (in any format) share one view, so
/// the limit bounds what a scope costs in sending, not in views.
public struct WireLimits: Hashable, Sendable {
  /// The most connections of one scope that may be subscribed at once.
  public var subscriptionsPerScope: Int
  /// The most views one subscribe of several views (format 3) may name.
  public var viewsPerSubscribe: Int

  /// Creates limits.
  /// - Parameters:
  ///   - subscriptionsPerScope: The most connections of one scope subscribed at once; 64 by default.
  ///   - viewsPerSubscribe: The most views one subscribe may name; 16 by default.
  public init(subscriptionsPerScope: Int = 64, viewsPerSubscribe: Int = 16) {
    self.subscriptionsPerScope = subscriptionsPerScope
    self.viewsPerSubscribe = viewsPerSubscribe
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
