// The service: the board's HTTP API, its page, and a WebSocket that streams the board's wire messages.

import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import SimpleSource

/// What `POST /api/cards` takes.
struct CreateRequest: Decodable {
  var id: String?
  var title: String
  var column: String
  var before: String?
}

/// What `PATCH /api/cards/{id}` takes.
struct RenameRequest: Decodable { var title: String }

/// What `POST /api/cards/{id}/move` takes.
struct MoveRequest: Decodable {
  var column: String
  var before: String?
}

/// The largest request body accepted, in bytes.
let maxBody = 16 * 1024
/// The largest WebSocket message accepted from a client, in bytes.
let maxInbound = 16 * 1024

/// Builds the service for `board`: `GET /` (the page), the HTTP API under `/api`, and `/live`.
/// `onListening` is told the port once the server listens.
public func makeApplication(
  board: Board, host: String = "127.0.0.1", port: Int, logger: Logger = Logger(label: "live-board"),
  onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
  let router = Router(context: BasicWebSocketRequestContext.self)
  if let page = Bundle.module.resourceURL?.appendingPathComponent("Public").path {
    router.middlewares.add(FileMiddleware(page, searchForIndexHtml: true, logger: logger))
  }

  router.get("/api/board") { _, _ in
    let (version, columns) = try await board.read()
    return try json(BoardBody(version: version, stream: board.stream, columns: columns))
  }
  router.post("/api/cards") { request, context in
    try await respond {
      let input = try await body(CreateRequest.self, from: request)
      let (card, version) = try await board.create(
        id: input.id, title: input.title, column: input.column, before: input.before)
      return try json(WriteBody(version: version, card: card), status: .created)
    }
  }
  router.patch("/api/cards/{id}") { request, context in
    try await respond {
      let id = try context.parameters.require("id")
      let input = try await body(RenameRequest.self, from: request)
      let (card, version) = try await board.rename(id, title: input.title)
      return try json(WriteBody(version: version, card: card))
    }
  }
  router.post("/api/cards/{id}/move") { request, context in
    try await respond {
      let id = try context.parameters.require("id")
      let input = try await body(MoveRequest.self, from: request)
      let version = try await board.move(id, to: input.column, before: input.before)
      return try json(WriteBody(version: version, card: nil))
    }
  }
  router.delete("/api/cards/{id}") { _, context in
    try await respond {
      let version = try await board.delete(try context.parameters.require("id"))
      return try json(WriteBody(version: version, card: nil))
    }
  }
  // Every client's WebSocket is a session of one service: the bytes move here, the protocol is the
  // package's (subscribe, resume, errors; each batch encoded once for all clients).
  let service = WireService(source: board.source, stream: board.stream)
  router.ws("/live") { inbound, outbound, _ in
    let session = service.session { bytes in
      try await outbound.write(.text(String(decoding: bytes, as: UTF8.self)))
    }
    do {
      for try await message in inbound.messages(maxSize: maxInbound) {
        guard case .text(let text) = message else {
          await session.refuse(WireError(.malformed, "messages are JSON text, not binary"))
          continue
        }
        await session.receive(text: text)
      }
    } catch {
      await session.close()
      throw error
    }
    await session.close()
  }

  return Application(
    router: router,
    server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(maxFrameSize: 1 << 22)),
    configuration: .init(address: .hostname(host, port: port)),
    onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
    logger: logger)
}

struct BoardBody: Codable {
  var version: Int
  var stream: String
  var columns: [Column]
}

struct WriteBody: Codable {
  var version: Int
  var card: Card?
}

struct ErrorBody: Codable {
  struct Detail: Codable {
    var code: String
    var detail: String
  }
  var error: Detail
}

func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  return Response(
    status: status, headers: [.contentType: "application/json"],
    body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
}

/// Decodes a JSON body of at most ``maxBody`` bytes; a refusal is a 400 or 413 naming what was wrong.
func body<T: Decodable>(_ type: T.Type, from request: Request) async throws(BoardError) -> T {
  var request = request
  let buffer: ByteBuffer
  do { buffer = try await request.collectBody(upTo: maxBody) } catch {
    throw BoardError(status: 413, code: "tooLarge", detail: "a request body has at most \(maxBody) bytes")
  }
  do {
    return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
  } catch let DecodingError.keyNotFound(key, _) {
    throw BoardError(status: 400, code: "invalid", detail: "missing \(key.stringValue)")
  } catch let DecodingError.typeMismatch(type, context) {
    let path = context.codingPath.map(\.stringValue).joined(separator: ".")
    throw BoardError(status: 400, code: "invalid", detail: "\(path) must be \(type)")
  } catch {
    throw BoardError(status: 400, code: "invalid", detail: "the body is not JSON of the expected shape")
  }
}

/// Runs a write and turns a ``BoardError`` into its status and a JSON body `{"error": {code, detail}}`.
func respond(_ body: () async throws -> Response) async throws -> Response {
  do {
    return try await body()
  } catch let error as BoardError {
    return try json(
      ErrorBody(error: .init(code: error.code, detail: error.detail)),
      status: HTTPResponse.Status(code: error.status))
  }
}
