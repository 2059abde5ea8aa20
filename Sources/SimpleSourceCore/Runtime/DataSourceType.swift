// The protocol the view layer and users' code program against: snapshot, subscribe, settle.

/// A source of sectioned data that any number of subscribers can follow.
///
/// ``BasicDataSource`` and ``ObservedDataSource`` conform; conform your own type (a database feed, a
/// server) to plug it into the view layer. A conformance keeps the contract G1–G13 (the article *What a data
/// source promises*; G12 concerns the wire service): build it on a ``Broadcaster``, which provides the fan-out,
/// backlog composition, pacing and release, and check it with `SimpleSourceTesting`'s
/// `DataSourceConformance`.
public protocol DataSourceType<Section>: AnyObject, Sendable {
  /// The section type.
  associatedtype Section: SectionType

  /// The newest state.
  var snapshot: Snapshot<Section> { get async }

  /// The version of the newest state, with the counter that made it: waits on this source's followers
  /// check it (see ``Version``).
  var version: Version { get async }

  /// The version a subscriber that has taken every batch offered so far is at: the `to` of the newest
  /// batch offered to subscribers, or the first version when none was, or a later version the source
  /// brought its subscribers to without a shared batch (``BasicDataSource/offeredVersion``).
  ///
  /// Mutations that cancel out make versions but no batch (G4), so this can be behind ``version``. A
  /// source built on a source awaits it after `settled()`, to know when it has followed everything. The
  /// default is ``version``, which is right for a source that offers a batch for every version.
  var offeredVersion: Version { get async }

  /// Returns the current snapshot and the batches that follow it (G5).
  func subscribe(pacing: Pacing) async -> Subscription<Section>

  /// Returns once every mutation made before the call has been diffed and offered to every subscriber
  /// (G10).
  func settled() async

  /// Resumes a subscriber that holds the state at `version` (G11): one batch from exactly that version
  /// when the source still knows it, an explicit reset with the current snapshot otherwise.
  ///
  /// The default resumes only from the current version and resets from any other; sources built on a
  /// ``Broadcaster`` forward to ``Broadcaster/subscribe(from:pacing:)``, which retains a history.
  func subscribe(from version: Int, pacing: Pacing) async -> Resumption<Section>
}

extension DataSourceType {
  /// The version of the newest state: every version of such a source is offered as a batch.
  public var offeredVersion: Version { get async { await version } }

  /// Returns the current snapshot and every batch after it, as soon as each is ready.
  public func subscribe() async -> Subscription<Section> { await subscribe(pacing: .immediate) }

  /// Resumes from the current version only: any other version is a reset.
  public func subscribe(from version: Int, pacing: Pacing) async -> Resumption<Section> {
    let subscription = await subscribe(pacing: pacing)
    return subscription.version.number == version ? .resumed(subscription) : .reset(subscription)
  }
}
