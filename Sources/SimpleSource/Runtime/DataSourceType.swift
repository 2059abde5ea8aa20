// The protocol the view layer and users' code program against: snapshot, subscribe, settle.

/// A source of sectioned data that any number of subscribers can follow.
///
/// ``BasicDataSource`` and ``ObservedDataSource`` conform; conform your own type (a database feed, a
/// server) to plug it into the view layer. A conformance keeps the contract G1–G10 documented on
/// ``Subscription`` and ``BasicDataSource``: build it on a ``Broadcaster``, which provides the fan-out,
/// backlog composition, pacing and release, and check it with `SimpleSourceTesting`'s
/// `DataSourceConformance`.
public protocol DataSourceType<Section>: AnyObject, Sendable {
  /// The section type.
  associatedtype Section: SectionType

  /// The newest state.
  var snapshot: Snapshot<Section> { get async }

  /// The version of the newest state.
  var version: Int { get async }

  /// Returns the current snapshot and the batches that follow it (G5).
  func subscribe(pacing: Pacing) async -> Subscription<Section>

  /// Returns once every mutation made before the call has been diffed and offered to every subscriber
  /// (G10).
  func settled() async
}

extension DataSourceType {
  /// Returns the current snapshot and every batch after it, as soon as each is ready.
  public func subscribe() async -> Subscription<Section> { await subscribe(pacing: .immediate) }
}
