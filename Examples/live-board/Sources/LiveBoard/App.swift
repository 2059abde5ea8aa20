// The service: the board's HTTP API, its page, and a WebSocket that streams the board's wire messages.

import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore
import SimpleSource
import SimpleSourceHummingbird

/// What `POST /api/cards` takes.
struct CreateRequest: Decodable {
  var id: String?
  var title: String
  var column: String
  var before: String?
  var `private`: Bool?
}

/// What `PATCH /api/cards/{id}` takes: a new title, whether the card is private, or both.
struct EditRequest: Decodable {
  var title: String?
  var `private`: Bool?
}

/// What `POST /api/cards/{id}/move` takes.
struct MoveRequest: Decodable {
  var column: String
  var before: String?
}

/// The largest request body accepted, in bytes.
let maxBody = 16 * 1024
/// The largest WebSocket message accepted from a client, in bytes; also the largest frame read, so that a
/// client cannot make the server buffer more than one message's worth.
let maxInbound = 16 * 1024
/// The longest search text accepted, in characters.
let maxSearch = 100

/// The user a request speaks for: `?user=NAME`, or `nil` for a guest.
///
/// A demonstration of scopes, not authentication: a real service takes the user from a session cookie or a
/// bearer token it verified, and the rest stays as it is.
func user(of request: Request) throws(BoardError) -> String? {
  try Board.checkedUser(request.uri.queryParameters["user"].map(String.init))
}

/// The most cards a `top` query shows per column.
let maxTop = 100

/// The queries a page may subscribe to: `search`, the cards whose title contains `text` (ignoring case and
/// diacritics), in every column; `top`, the first `limit` cards of each column (1 to ``maxTop``), a
/// window that sends a client nothing when cards change below it.
let boardQueries: [WireQuery<Column>] = [
  // Spellings the search reads alike (case, diacritics, surrounding spaces) are one view: shared by every
  // client of a user that asks for any of them, and counted once against the service's budget.
  WireQuery("search", parameters: ["text": .string], canonical: foldedSearch) {
    arguments throws(WireQueryRefusal) in
    let text = try arguments.string("text").trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.count <= maxSearch else {
      throw WireQueryRefusal("a search has at most \(maxSearch) characters")
    }
    if text.isEmpty { return .all }
    return Projection(where: { card in
      card.title.range(of: text, options: [.caseInsensitive, .diacriticInsensitive]) != nil
    })
  },
  WireQuery("top", parameters: ["limit": .integer]) { arguments throws(WireQueryRefusal) in
    let limit = try arguments.integer("limit")
    guard (1...maxTop).contains(limit) else {
      throw WireQueryRefusal("a top query shows 1 to \(maxTop) cards per column")
    }
    return Projection(rows: 0..<limit)
  },
]
/// A search's text in the one form the search reads alike: trimmed, folded for case and diacritics.
@Sendable func foldedSearch(_ parameters: [String: WireValue]) -> [String: WireValue] {
  guard case .string(let text)? = parameters["text"] else { return parameters }
  let folded = text.trimmingCharacters(in: .whitespacesAndNewlines)
    .folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
  return ["text": .string(folded)]
}

/// Builds the service for `board`: `GET /` (the page and `/wire-client.js`), the HTTP API under `/api`,
/// `/live`, `/read` and `POST /edit` (a page's edits when it follows by reads).
/// `onListening` is told the port once the server listens.
/// `limits` bounds how long a client may take over each part of a request, and what one address or user
/// may hold (``ConnectionLimits``); `viewsPerAddress` is the most distinct views the WebSockets of one
/// address may show at once, whatever their users (the service's `WireLimits.viewsPerOrigin`): views are
/// stepped through every write, so this bounds what one address adds to each write's cost. `readSecret`
/// signs the read tokens of `/read` (the same on every instance of one board; a new one per process when
/// `nil`).
public func makeApplication(
  board: some BoardStore, host: String = "127.0.0.1", port: Int, logger: Logger = Logger(label: "live-board"),
  limits: ConnectionLimits = ConnectionLimits(), viewsPerAddress: Int = 32, readSecret: [UInt8]? = nil,
  onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
  let router = Router(context: WireRequestContext.self)
  if let page = Bundle.module.resourceURL?.appendingPathComponent("Public").path {
    router.middlewares.add(FileMiddleware(page, searchForIndexHtml: true, logger: logger))
  }
  // The wire format's browser client, which the page's `board.js` draws on.
  WireBrowserClient.route("/wire-client.js", on: router)

  router.get("/api/board") { request, _ in
    try await respond {
      let (version, columns) = try await board.read(visibleTo: try user(of: request))
      return try json(BoardBody(version: version, stream: board.stream, columns: columns))
    }
  }
  router.post("/api/cards") { request, context in
    try await respond {
      let user = try user(of: request)
      let (input, arguments) = try await body(CreateRequest.self, from: request)
      return try await once(request, "POST /api/cards", arguments, user: user, on: board, status: .created) {
        ticket in
        let (card, version) = try await board.create(
          id: input.id, title: input.title, column: input.column, before: input.before, user: user,
          isPrivate: input.private ?? false, answering: ticket)
        return try json(WriteBody(version: version, card: card), status: .created)
      }
    }
  }
  router.patch("/api/cards/{id}") { request, context in
    try await respond {
      let user = try user(of: request)
      let id = try context.parameters.require("id")
      let (input, arguments) = try await body(EditRequest.self, from: request)
      return try await once(request, "PATCH /api/cards/\(id)", arguments, user: user, on: board) {
        ticket in
        let (card, version) = try await board.edit(
          id, title: input.title, isPrivate: input.private, user: user, answering: ticket)
        return try json(WriteBody(version: version, card: card))
      }
    }
  }
  router.post("/api/cards/{id}/move") { request, context in
    try await respond {
      let user = try user(of: request)
      let id = try context.parameters.require("id")
      let (input, arguments) = try await body(MoveRequest.self, from: request)
      return try await once(request, "POST /api/cards/\(id)/move", arguments, user: user, on: board) {
        ticket in
        let version = try await board.move(
          id, to: input.column, before: input.before, user: user, answering: ticket)
        return try json(WriteBody(version: version, card: nil))
      }
    }
  }
  router.delete("/api/cards/{id}") { request, context in
    try await respond {
      let user = try user(of: request)
      let id = try context.parameters.require("id")
      return try await once(request, "DELETE /api/cards/\(id)", .null, user: user, on: board) {
        ticket in
        let version = try await board.delete(id, user: user, answering: ticket)
        return try json(WriteBody(version: version, card: nil))
      }
    }
  }
  // Every client's WebSocket is a session of one service: the bytes move here, the protocol is the
  // package's (subscribe, queries, resume, errors). Each connection's scope is its user: the shared cards
  // and that user's private ones. Clients with the same user and query share one view and one encoded batch.
  // Clients may write over their WebSocket too (the wire format's `edit`): the same writes as the HTTP API.
  // Guests share one scope (nil): the board limits no count or rate per scope, but per address.
  var serviceLimits = WireLimits.unscoped
  serviceLimits.viewsPerOrigin = viewsPerAddress
  let service = WireService(
    source: board.source, stream: board.stream, queries: boardQueries, history: board.history,
    limits: serviceLimits, edits: boardWriter(board)
  ) { (user: String?) in { card in card.isVisible(to: user) } }
  // The socket machinery is the integration package's: frames shared per batch, pings, limits per address
  // and per user (a user's scope counts under its name; guests only per address).
  let sockets = WireWebSockets(
    service: service, limits: limits, maxMessageBytes: maxInbound, user: { $0 },
    receiving: { text in
      // A client resuming from a version another instance made reads the log here first (cluster).
      if text.contains(#""subscribe""#),
        case .subscribe(_, let from?, _)? = try? WireCoder().read(Data(text.utf8), as: Column.self).message
      {
        await board.reach(from)
      }
    }
  ) { request throws(BoardError) in
    try Board.checkedUser(request.uri.queryParameters["user"].map(String.init))
  }
  // The same views read over HTTP, for a page without WebSockets and for readers behind a cache (the
  // cluster's nginx keeps and shares these answers): the reader is the `X-User` header, every instance of
  // one board signs read tokens with `readSecret`.
  let reads = WireHTTPReads(
    service: service,
    policy: WireReadPolicy(secret: readSecret ?? (0..<32).map { _ in .random(in: 0...255) }),
    readsPerAddress: limits.webSocketsPerAddress == .max ? .max : 64,
    before: { read in
      // A reader holding a version another instance made: read the log up to it first (cluster).
      if let version = read.offset?.version { await board.reach(version) }
    }
  ) { request throws(BoardError) in
    try Board.checkedUser(request.headers[HTTPField.Name("X-User")!])
  }
  reads.route("/read", on: router)
  reads.routeAuthorization("/read-authorization", on: router)
  // A page without WebSockets posts its edits: made as a WebSocket's are, answered once per user and id.
  reads.routeEdits("/edit", on: router)

  return Application(
    router: router,
    server: sockets.server(path: "/live"),
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
func body<T: Decodable>(_ type: T.Type, from request: Request) async throws(BoardError) -> (T, WireJSON) {
  var request = request
  let buffer: ByteBuffer
  do { buffer = try await request.collectBody(upTo: maxBody) } catch {
    throw BoardError(status: 413, code: "tooLarge", detail: "a request body has at most \(maxBody) bytes")
  }
  do {
    let data = Data(buffer.readableBytesView)
    return (try JSONDecoder().decode(T.self, from: data), try JSONDecoder().decode(WireJSON.self, from: data))
  } catch let DecodingError.keyNotFound(key, _) {
    throw BoardError(status: 400, code: "invalid", detail: "missing \(key.stringValue)")
  } catch let DecodingError.typeMismatch(type, context) {
    throw BoardError(status: 400, code: "invalid", detail: "\(field(context)) must be \(jsonName(of: type))")
  } catch let DecodingError.valueNotFound(type, context) {
    throw BoardError(
      status: 400, code: "invalid", detail: "\(field(context)) must be \(jsonName(of: type)), not null")
  } catch {
    throw BoardError(status: 400, code: "invalid", detail: "the body is not JSON of the expected shape")
  }
}

/// The field a decoding error is about, as a client names it: its JSON path, or "the body" for the whole.
func field(_ context: DecodingError.Context) -> String {
  let path = context.codingPath.map(\.stringValue).joined(separator: ".")
  return path.isEmpty ? "the body" : path
}

/// What a Swift type is called in JSON, for error details: a client reads JSON, not Swift.
func jsonName(of type: Any.Type) -> String {
  switch type {
  case is String.Type, is Optional<String>.Type: "a string"
  case is Bool.Type, is Optional<Bool>.Type: "true or false"
  case is Int.Type, is Optional<Int>.Type: "an integer"
  default: "a JSON object"
  }
}

/// Runs a write and turns a ``BoardError`` into its status and a JSON body `{"error": {code, detail}}`.
/// Makes an HTTP write once per `Idempotency-Key` (IETF httpapi draft): a request that carries one is
/// recorded in the board's table of edit answers with the write, under (user, key), with the fingerprint
/// of what it asks (`what`, the method and path, and the body's `arguments`). Sent again with the same key
/// and body, on this instance or another of the cluster, it is answered with the first write's status and
/// version (`card` is `nil`: the board has the card as it is now) and the header `Idempotent-Replayed:
/// true`, and not made again; with the same key and another body, 422. A write with no key is made each
/// time it is sent. Keys are kept as long as the board keeps edits' answers
/// (``BoardStore/answerRetention`` versions).
func once(
  _ request: Request, _ what: String, _ arguments: WireJSON, user: String?, on board: some BoardStore,
  status: HTTPResponse.Status = .ok, make: (EditTicket?) async throws -> Response
) async throws -> Response {
  guard let key = request.headers[idempotencyKey] else { return try await make(nil) }
  guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
    throw BoardError.invalid("an Idempotency-Key is 1 to 255 visible ASCII characters")
  }
  let edit = WireEdit<Column>(id: "http:\(key)", operations: [.named(WireCall(what, arguments: arguments))])
  let ticket = EditTicket(user: user, edit: edit)
  do {
    return try await make(ticket)
  } catch {
    // Refused: made before under the key (its answer recorded, so the store made nothing), here or on
    // another instance. The table has its answer, or says the key was another request's.
    switch await recall(ticket, on: board) {
    case .success(let recorded?): return try replayed(recorded, status: status)
    case .failure(let refusal) where refusal.code == "editIDReused":
      throw BoardError(
        status: 422, code: "idempotencyKeyReused", detail: "this Idempotency-Key was used for another request"
      )
    case .success(nil), .failure: throw error
    }
  }
}

/// `board`'s recorded answer to `ticket`, as a result.
func recall(_ ticket: EditTicket, on board: some BoardStore) async -> Result<Int?, BoardError> {
  do throws(BoardError) {
    return .success(try await board.recall(ticket))
  } catch {
    return .failure(error)
  }
}

/// The answer given again to a write resent with its `Idempotency-Key`: the first answer's status and
/// version.
func replayed(_ version: Int, status: HTTPResponse.Status) throws -> Response {
  var response = try json(WriteBody(version: version, card: nil), status: status)
  response.headers[idempotentReplayed] = "true"
  return response
}

/// The request header that makes a write safe to resend.
let idempotencyKey = HTTPField.Name("Idempotency-Key")!
/// The response header of an answer given again for a resent write.
let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!

func respond(_ body: () async throws -> Response) async throws -> Response {
  do {
    return try await body()
  } catch let error as BoardError {
    var response = try json(
      ErrorBody(error: .init(code: error.code, detail: error.detail)),
      status: HTTPResponse.Status(code: error.status))
    if error.status == 503 { response.headers[.retryAfter] = "1" }
    return response
  }
}
