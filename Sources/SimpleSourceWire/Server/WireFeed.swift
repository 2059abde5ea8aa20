// The sending side: one client's messages from any data source, starting with a reset or a resume.

public import SimpleSourceCore
public import Foundation

/// The messages one client receives from a data source: a reset or a resume first, then one batch
/// message for every batch of its subscription.
///
/// ```swift
/// let feed = await source.wireFeed(stream: "tasks", request: request)
/// for await message in feed { try await socket.send(coder.encode(message)) }
/// ```
///
/// Cancel it (or drop it) when the client goes away: see ``Subscription/cancel()``.
public struct WireFeed<Section: SectionType>: AsyncSequence, Sendable {
  /// The first message: ``WireMessage/resumed(stream:version:)`` when the client's version was resumed,
  /// ``WireMessage/reset(stream:version:snapshot:)`` otherwise.
  public let start: WireMessage<Section>
  /// The subscription whose batches follow.
  public let subscription: Subscription<Section>

  /// Creates a feed.
  public init(start: WireMessage<Section>, subscription: Subscription<Section>) {
    self.start = start
    self.subscription = subscription
  }

  /// Ends the subscription; the sequence then finishes.
  public func cancel() { subscription.cancel() }

  /// Yields ``start``, then a batch message for each batch.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var start: WireMessage<Section>?
    var batches: AsyncStream<UpdateBatch<Section>>.Iterator

    /// The next message, or `nil` when the subscription has ended.
    public mutating func next() async -> WireMessage<Section>? {
      if let start {
        self.start = nil
        return start
      }
      return await batches.next().map { .batch(WireBatch($0)) }
    }
  }

  /// The feed's messages as JSON bytes: ``start``, then each batch's message, encoded once per batch
  /// however many feeds send it (`WireCoder.encode(_:)` for a batch). What a server writes to
  /// its sockets.
  public func encoded(with coder: WireCoder = WireCoder()) -> Encoded
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    Encoded(start: coder.encode(start), batches: subscription.batches, coder: coder)
  }

  /// The feed's messages as JSON bytes; see ``encoded(with:)``.
  public struct Encoded: AsyncSequence, Sendable
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    let start: Data
    let batches: AsyncStream<UpdateBatch<Section>>
    let coder: WireCoder

    /// Yields the start message's bytes, then each batch message's.
    public struct AsyncIterator: AsyncIteratorProtocol {
      var start: Data?
      var batches: AsyncStream<UpdateBatch<Section>>.Iterator
      let coder: WireCoder

      /// The next message's bytes, or `nil` when the subscription has ended.
      public mutating func next() async -> Data? {
        if let start {
          self.start = nil
          return start
        }
        return await batches.next().map(coder.encode)
      }
    }

    /// Makes the iterator; the feed has one consumer.
    public func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(start: start, batches: batches.makeAsyncIterator(), coder: coder)
    }
  }

  /// Makes the iterator; the feed has one consumer.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(start: start, batches: subscription.batches.makeAsyncIterator())
  }
}

extension DataSourceType {
  /// The feed for a client that sent `request`: resumed from the version it names when it names this
  /// `stream` and the source retains that version (G11), a reset with the whole state otherwise.
  ///
  /// - Parameters:
  ///   - stream: This source's stream name. Make it unique per source instance (a server that restarts
  ///     with fresh versions must change it), so that a client never resumes onto another history.
  ///   - request: The client's stream and version, from its ``WireMessage/subscribe(stream:from:query:)``.
  ///   - pacing: How often this client receives batches.
  /// - Complexity: as ``subscribe(from:pacing:)``; each batch message is O(*k* log *n*) to make.
  public func wireFeed(stream: String, request: (stream: String?, from: Int?), pacing: Pacing = .immediate)
    async
    -> WireFeed<Section>
  {
    if request.stream == stream, let from = request.from {
      switch await subscribe(from: from, pacing: pacing) {
      case .resumed(let subscription):
        return WireFeed(start: .resumed(stream: stream, version: from), subscription: subscription)
      case .reset(let subscription):
        return WireFeed(
          start: .reset(
            stream: stream, version: subscription.version.number, snapshot: subscription.snapshot),
          subscription: subscription)
      }
    }
    let subscription = await subscribe(pacing: pacing)
    return WireFeed(
      start: .reset(stream: stream, version: subscription.version.number, snapshot: subscription.snapshot),
      subscription: subscription)
  }
}
