// A list of notes served live over WebSockets: each user sees the shared notes and their own.
import Foundation
import HTTPTypes
import Hummingbird
import SimpleSource
import SimpleSourceHummingbird

struct Note: Identifiable, Equatable, Sendable, Codable {
  var id: String
  var text: String
  var owner: String?  // nil: everyone's
}

let notes = try BasicDataSource(sections: [
  Section(id: "notes", items: [Note(id: "welcome", text: "Welcome", owner: nil)])
])

// The service: the protocol (subscribe, resume, queries, errors) and each scope's rows.
let service = WireService(source: notes, stream: "notes-\(UUID())") { (user: String?) in
  { note in note.owner == nil || note.owner == user }
}

// The transport: one session per WebSocket, its scope read from the upgrade request. A real service
// verifies a cookie or a token here; throwing refuses the upgrade.
let sockets = WireWebSockets(service: service, user: { $0 }) { request in
  request.uri.queryParameters["user"].map(String.init)
}
let user = HTTPField.Name("X-User")!
let router = Router(context: WireRequestContext.self)
// A note posted with an `X-User` header is that user's own; without one, everyone's.
router.post("/notes") { request, _ -> HTTPResponse.Status in
  let text = try await String(buffer: request.body.collect(upTo: 1_024))
  let note = Note(id: UUID().uuidString, text: text, owner: request.headers[user])
  try await notes.appendItems([note], toSection: "notes")
  return .created
}

// Reads over HTTP, for many readers of one view behind a cache: the reader is the `X-User` header (the
// URL's query is the read's). Every instance of a service signs its read tokens with one secret.
let environment = ProcessInfo.processInfo.environment
let secret =
  environment["READ_SECRET"].map { Array($0.utf8) } ?? (0..<32).map { _ in UInt8.random(in: .min ... .max) }
let lifetime = Int(environment["READ_TOKEN_SECONDS"] ?? "") ?? 600
let reads = WireHTTPReads(
  service: service, policy: WireReadPolicy(secret: secret, tokenLifetime: lifetime)
) { request in
  request.headers[user]
}
reads.route("/read", on: router)
reads.routeAuthorization("/read-authorization", on: router)  // asked by a cache before each answer it keeps
WireBrowserClient.route("/wire-client.js", on: router)  // the wire format's client, for pages

let port = Int(environment["PORT"] ?? "") ?? 8080
let app = Application(
  router: router, server: sockets.server(path: "/live"),
  configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
