// The server's connections: HTTP/1 answered by Hummingbird's responder, and WebSocket upgrades to the
// wire's path made here, on the connection's event loop. An upgraded connection is served by the handlers
// of its pipeline alone: the connection's task (Hummingbird runs one per accepted connection) ends once the
// upgrade is made, so an idle WebSocket keeps no task waiting.

import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

extension WebSocketUpgradeRequest {
  /// The request an HTTP/1 head asks for, from `address`.
  /// - Complexity: O(headers).
  init(head: HTTPRequestHead, address: String?) {
    self.init(
      uri: URI(head.uri),
      headers: HTTPFields(
        head.headers.compactMap { field in
          HTTPField.Name(field.name).map { HTTPField(name: $0, value: field.value) }
        }),
      address: address)
  }
}

/// One accepted connection: HTTP/1 guarded by ``RequestGuard``, and an upgrade to a WebSocket at `path`
/// that `accepts`, opened by `open` on the connection's event loop.
struct WireHTTPChannel: ServerChildChannel, HTTPChannelHandler {
  /// What the connection's first request became.
  enum Negotiated: Sendable {
    /// A WebSocket, served by its pipeline.
    case webSocket
    /// Plain HTTP, for Hummingbird's responder.
    case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    /// An upgrade asked for and declined (not the WebSocket path, or a scope that does not read): 400.
    case declined(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
  }

  struct Value: ServerChildChannelValue {
    let negotiated: EventLoopFuture<Negotiated>
    let channel: any Channel
  }

  let responder: HTTPChannelHandler.Responder
  /// The WebSocket's path (without its query).
  let path: String
  let limits: ConnectionLimits
  let maxMessageBytes: Int
  let counts: ConnectionCounts
  /// Why an upgrade from an address is refused now, if it is (answered 429 before any upgrade).
  let refusal: UpgradeRefusal.Check
  /// Whether an upgrade request is one a WebSocket may open for (its scope reads).
  let accepts: @Sendable (WebSocketUpgradeRequest) -> Bool
  /// Opens the upgraded connection's session: adds its handlers to `channel`'s pipeline, on its loop.
  let open: @Sendable (_ channel: any Channel, WebSocketUpgradeRequest) throws -> Void

  init(
    responder: @escaping HTTPChannelHandler.Responder, path: String, limits: ConnectionLimits,
    maxMessageBytes: Int, counts: ConnectionCounts, refusal: @escaping UpgradeRefusal.Check,
    accepts: @escaping @Sendable (WebSocketUpgradeRequest) -> Bool,
    open: @escaping @Sendable (_ channel: any Channel, WebSocketUpgradeRequest) throws -> Void
  ) {
    self.responder = Self.redirectingUpgrades(responder)
    self.path = path
    self.limits = limits
    self.maxMessageBytes = maxMessageBytes
    self.counts = counts
    self.refusal = refusal
    self.accepts = accepts
    self.open = open
  }

  func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
    // Past the server's or the address's connections, closed as accepted: nothing is read or kept.
    let address = channel.remoteAddress?.ipAddress ?? "unknown"
    guard counts.enter(address) else {
      channel.close(promise: nil)
      return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
    }
    channel.closeFuture.whenComplete { [counts] _ in counts.leave(address) }
    return channel.eventLoop.makeCompletedFuture {
      // NIO keeps a connection's last receive buffer for its next read: 2 KiB at first by default, which
      // an idle WebSocket would hold for its life. Clients send little (requests, subscribes, edits), so
      // reads start at 256 bytes; a client that sends more grows its buffer, read by read, to 64 KiB.
      try channel.syncOptions?.setOption(
        ChannelOptions.recvAllocator,
        value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65_536))
      let asked = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
      let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
        maxFrameSize: maxMessageBytes,
        shouldUpgrade: { [path, accepts] channel, head in
          asked.value = true
          let request = WebSocketUpgradeRequest(head: head, address: address)
          let upgrades = request.uri.path == path && accepts(request)
          return channel.eventLoop.makeSucceededFuture(upgrades ? HTTPHeaders() : nil)
        },
        upgradePipelineHandler: { [open] channel, head in
          channel.eventLoop.makeCompletedFuture {
            try open(channel, WebSocketUpgradeRequest(head: head, address: address))
            return .webSocket
          }
        })
      let upgrades = NIOTypedHTTPServerUpgradeConfiguration(
        upgraders: [upgrader],
        notUpgradingCompletionHandler: { [limits] channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try channel.pipeline.syncOperations.addHandler(
              HTTPConnectionStateHandler(idleTimeout: limits.idle, logger: logger))
            let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
              wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            return asked.value ? .declined(http) : .http(http)
          }
        })
      var configuration = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrades)
      configuration.enablePipelining = false  // one request at a time: NIOAsyncChannel reads them in order
      configuration.enableErrorHandling = false  // RequestGuard answers what the decoder cannot read
      configuration.enableResponseHeaderValidation = false  // HTTPTypes validated them
      configuration.decoderConfiguration.maxHeaderFieldSize = limits.headBytes
      configuration.decoderConfiguration.maxHeaderListSize = limits.headBytes
      let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
        configuration: configuration)
      let decoder = try channel.pipeline.syncOperations.handler(
        type: ByteToMessageHandler<HTTPRequestDecoder>.self)
      try channel.pipeline.syncOperations.addHandler(
        RequestGuard(limits: limits, refusal: refusal), position: .after(decoder))
      return Value(negotiated: negotiated, channel: channel)
    }
  }

  func handle(value: Value, logger: Logger) async {
    let negotiated: Negotiated
    do {
      negotiated = try await value.negotiated.get()
    } catch {
      // Closed before its first request was negotiated: one the guard answered itself (400, 408, 429,
      // 431) or one its client closed. Nothing the server did wrong to log at error level (once per
      // connection: what a client could make the server write without bound).
      logger.debug("a connection closed before its first request", metadata: ["error.type": "\(error)"])
      try? await value.channel.close()
      return
    }
    switch negotiated {
    case .webSocket:
      // Served by its pipeline from here on; this task ends, and nothing waits while it idles.
      return
    case .http(let http):
      await handleHTTP(asyncChannel: http, logger: logger)
    case .declined(let http):
      try? await http.executeThenClose { _, outbound in
        let head = HTTPResponse(
          status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
        try await outbound.write(contentsOf: [.head(head), .end(nil)])
      }
    }
    try? await value.channel.close()
  }

  /// `responder`, except that a WebSocket upgrade asked for after another request on the connection (too
  /// late for the upgrade handler, gone after the first) is redirected to its own URI with the connection
  /// closed, so that the client asks again on a new connection.
  static func redirectingUpgrades(
    _ responder: @escaping HTTPChannelHandler.Responder
  ) -> HTTPChannelHandler.Responder {
    { request, writer, channel in
      guard request.headers[.upgrade]?.lowercased() == "websocket" else {
        return try await responder(request, writer, channel)
      }
      let location = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
      try await writer.writeResponse(
        HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
      throw ChannelError.outputClosed
    }
  }
}
