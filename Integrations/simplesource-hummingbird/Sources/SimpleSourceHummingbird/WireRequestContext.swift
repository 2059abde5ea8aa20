// The request context of the routes a `WireWebSockets` serves, and the WebSocket handler references it
// reads, kept by connection.

import Hummingbird
import HummingbirdWebSocket
import NIOConcurrencyHelpers
import NIOCore

/// The request context of a router that serves ``WireWebSockets``: Hummingbird's, plus the connection's
/// channel, which a WebSocket's frames are written to directly. Use it for the router's HTTP routes too.
///
/// Its WebSocket handler reference is kept in a table by connection, not in the context: the WebSocket
/// router stores the context inside that reference, which a stored property would make a cycle that is
/// never broken (about 5 KB, the context and the channel it names, kept for every WebSocket ever opened).
/// The table's entry goes when the connection closes.
public struct WireRequestContext: RequestContext, WebSocketRequestContext {
  /// Hummingbird's storage of the context.
  public var coreContext: CoreRequestContextStorage
  /// The connection.
  public let channel: any Channel

  /// The context of a request on `source`'s connection.
  /// - Complexity: O(1).
  public init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    channel = source.channel
  }

  /// The connection's WebSocket handler reference: made on the first upgrade request, dropped at close.
  /// - Complexity: O(1) expected.
  public var webSocket: WebSocketHandlerReference<Self> { WebSocketReferences.shared.reference(for: channel) }
}

/// The WebSocket handler references of open connections, by connection.
final class WebSocketReferences: Sendable {
  static let shared = WebSocketReferences()
  private let references = NIOLockedValueBox<
    [ObjectIdentifier: WebSocketHandlerReference<WireRequestContext>]
  >(
    [:])

  /// The number of connections that have one (tests read it).
  var count: Int { references.withLockedValue { $0.count } }

  /// The reference of `channel`, made when it has none; it is dropped when the channel closes (the entry
  /// holds the channel until then, so its identifier is not reused meanwhile).
  /// - Complexity: O(1).
  func reference(for channel: any Channel) -> WebSocketHandlerReference<WireRequestContext> {
    let key = ObjectIdentifier(channel)
    let (reference, made) = references.withLockedValue { references in
      if let held = references[key] { return (held, false) }
      let made = WebSocketHandlerReference<WireRequestContext>()
      references[key] = made
      return (made, true)
    }
    if made {
      channel.closeFuture.whenComplete { _ in
        self.references.withLockedValue { _ = $0.removeValue(forKey: key) }
      }
    }
    return reference
  }
}
