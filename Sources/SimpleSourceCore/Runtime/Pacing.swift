// Per-subscriber pacing: at most one batch per interval of an injectable clock, for UIs.

/// How often a subscriber receives batches.
///
/// With ``interval(_:clock:)`` a subscriber gets at most one batch per interval (one per frame, say);
/// whatever changes meanwhile is composed into its next batch. Inject a manual clock in tests to make
/// pacing deterministic.
public struct Pacing: Sendable {
  @usableFromInline let makeGate: (@Sendable () -> PacingGate)?

  /// Every batch as soon as it is ready.
  public static let immediate = Pacing(makeGate: nil)

  /// Whether batches are delivered as soon as they are ready.
  package var isImmediate: Bool { makeGate == nil }

  /// At most one batch per `interval` of `clock`: after a batch, the next is held until `interval` has
  /// passed since it.
  ///
  /// Needs `Clock`, which Apple platforms have from iOS 16, macOS 13, tvOS 16 and watchOS 9.
  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  public static func interval<C: Clock>(_ interval: C.Duration, clock: C) -> Pacing {
    Pacing { PacingGate(clock: clock, interval: interval) }
  }
}

/// One subscriber's pacing: remembers when it last got a batch and waits out the rest of the interval.
@usableFromInline
final class PacingGate: Sendable {
  private let waitTurn: @Sendable () async -> Void
  private let markDelivery: @Sendable () -> Void

  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  init<C: Clock>(clock: C, interval: C.Duration) {
    let last = Locked<C.Instant?>(nil)
    waitTurn = {
      guard let previous = last.withLock({ $0 }) else { return }
      // A cancelled wait ends early; the consumer then finds its subscription ended.
      try? await clock.sleep(until: previous.advanced(by: interval), tolerance: nil)
    }
    markDelivery = { last.withLock { $0 = clock.now } }
  }

  @usableFromInline func wait() async { await waitTurn() }
  @usableFromInline func delivered() { markDelivery() }
}
