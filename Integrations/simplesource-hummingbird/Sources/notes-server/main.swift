// A list of notes served live over WebSockets: each user sees the shared notes and their own.
import Foundation
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
let router = Router(context: WireRequestContext.self)
router.post("/notes") { request, _ -> HTTPResponse.Status in
  let text = try await String(buffer: request.body.collect(upTo: 1_024))
  try await notes.appendItems([Note(id: UUID().uuidString, text: text, owner: nil)], toSection: "notes")
  return .created
}
sockets.route("/live", on: router)

let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
let app = Application(
  router: router, server: sockets.server(webSocketRouter: router),
  configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
