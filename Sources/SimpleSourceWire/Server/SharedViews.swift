// Which live views a service holds, how many sessions use each, and which idle ones it keeps for resumes.

/// The views a ``WireService`` shares between its sessions, one per key (query, parameters, scope): a
/// synchronous state machine, so that every order of acquire and release can be tested on its own.
///
/// A view is *live* while sessions use it, and *idle* once the last one leaves: idle views are kept, the
/// most recently used last, so that a client that reconnects resumes from its version; beyond
/// ``idleLimit`` the oldest is evicted. A view whose start failed is discarded instead of kept idle.
package struct SharedViews<Key: Hashable, View> {
  /// A view and the number that tells it from an earlier view of the same key.
  package struct Entry {
    package let view: View
    package let number: Int
  }

  /// The live views and how many sessions use each.
  package private(set) var live: [Key: (entry: Entry, users: Int)] = [:]
  /// The idle views, by key.
  package private(set) var idle: [Key: Entry] = [:]
  /// The idle keys, least recently used first.
  package private(set) var idleOrder: [Key] = []
  /// How many idle views are kept.
  package let idleLimit: Int

  /// Creates an empty set of views.
  package init(idleLimit: Int) {
    precondition(idleLimit >= 0, "SimpleSource: keep zero idle views or more")
    self.idleLimit = idleLimit
  }

  /// The view of `key` with one more user, if there is one, live or idle; `nil` when the caller must
  /// ``add(_:_:)`` one.
  /// - Complexity: O(1) for a live view; O(idle views) for an idle one.
  package mutating func acquire(_ key: Key) -> Entry? {
    if let (entry, users) = live[key] {
      live[key] = (entry, users + 1)
      return entry
    }
    guard let entry = idle.removeValue(forKey: key) else { return nil }
    idleOrder.removeAll { $0 == key }
    live[key] = (entry, 1)
    return entry
  }

  /// Adds the view of `key`, with one user.
  /// - Precondition: `key` has no view (``acquire(_:)`` returned `nil`).
  package mutating func add(_ key: Key, _ entry: Entry) {
    precondition(live[key] == nil && idle[key] == nil, "SimpleSource: a shared view was added twice")
    live[key] = (entry, 1)
  }

  /// One user of view `number` of `key` leaves. When it was the last, the view is kept idle (`keep`) or
  /// discarded.
  /// - Returns: The views evicted, which the caller drops.
  /// - Complexity: O(idle views).
  package mutating func release(_ key: Key, number: Int, keep: Bool = true) -> [View] {
    guard let (entry, users) = live[key], entry.number == number else { return [] }
    guard users == 1 else {
      live[key] = (entry, users - 1)
      return []
    }
    live[key] = nil
    guard keep else { return [entry.view] }
    idle[key] = entry
    idleOrder.append(key)
    var evicted: [View] = []
    while idleOrder.count > idleLimit {
      let oldest = idleOrder.removeFirst()
      if let view = idle.removeValue(forKey: oldest)?.view { evicted.append(view) }
    }
    return evicted
  }
}
