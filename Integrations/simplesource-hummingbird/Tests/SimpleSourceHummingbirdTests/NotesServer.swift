// The service the tests serve: notes in one section, each shared or private to its owner, with a search
// query; a user's scope is the `X-User` header or `?user=NAME` (neither: a guest, who sees the shared
// notes).

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import SimpleSource
import SimpleSourceHummingbird

struct Note: Identifiable, Equatable, Sendable, Codable {
  var id: String
  var text: String
  /// The user who alone sees it; `nil`: everyone.
  var owner: String?
}

typealias Notes = Section<String, Note>

/// A user named by an empty `?user=`: refused.
struct EmptyUserName: Error {}

/// A notes service served over WebSockets at `/live` and by reads over HTTP at `/read` (edits posted to
/// `/edit`), with `GET /` answering "ok" and `POST /notes` the size of its body.
struct NotesServer: Sendable {
  let source: BasicDataSource<Notes>
  let service: WireService<Notes, String?>
  let application: Application<RouterResponder<WireRequestContext>>

  static let logger: Logger = {
    var logger = Logger(label: "simplesource-hummingbird-tests")
    logger.logLevel = .warning
    return logger
  }()

  /// The policy of the reads at `/read`: a test's secret, and the hold it gives.
  static func readPolicy(hold: Double) -> WireReadPolicy {
    WireReadPolicy(secret: Array("the notes tests' secret, 32 bytes".utf8), hold: hold)
  }

  init(
    limits: ConnectionLimits = ConnectionLimits(), viewsPerOrigin: Int = 32, hold: Double = 20,
    readsPerAddress: Int = 64, beforeRead: @escaping @Sendable (WireRead) async -> Void = { _ in }
  ) async throws {
    source = try BasicDataSource(sections: [
      Notes(
        id: "notes",
        items: [
          Note(id: "plan", text: "Plan the week", owner: nil),
          Note(id: "diary", text: "Ann's diary", owner: "ann"),
        ])
    ])
    var wireLimits = WireLimits.unscoped
    wireLimits.viewsPerOrigin = viewsPerOrigin
    let search = WireQuery<Notes>("search", parameters: ["text": .string]) {
      arguments throws(WireQueryRefusal) in
      let text = try arguments.string("text")
      return Projection(where: { note in note.text.localizedCaseInsensitiveContains(text) })
    }
    service = WireService(
      source: source, stream: "notes", queries: [search], limits: wireLimits, edits: .transactions(on: source)
    ) { (user: String?) in { note in note.owner == nil || note.owner == user } }
    // The user is the `X-User` header, else `?user=`; an empty name is refused.
    let sockets = WireWebSockets(service: service, limits: limits, user: { $0 }) { request in
      let name =
        request.headers[HTTPField.Name("X-User")!] ?? request.uri.queryParameters["user"].map(String.init)
      return try name.map { name in
        guard !name.isEmpty else { throw EmptyUserName() }
        return name
      }
    }
    let router = Router(context: WireRequestContext.self)
    router.get("/") { _, _ in "ok" }
    router.post("/notes") { request, _ in
      var request = request
      return "\(try await request.collectBody(upTo: 1024).readableBytes) bytes"
    }
    // Reads over HTTP: the user is the `X-User` header alone (the URL's query is the read's).
    let reads = WireHTTPReads(
      service: service, policy: Self.readPolicy(hold: hold), readsPerAddress: readsPerAddress,
      before: beforeRead
    ) { request in
      try request.headers[HTTPField.Name("X-User")!].map { name in
        guard !name.isEmpty else { throw EmptyUserName() }
        return name
      }
    }
    reads.route("/read", on: router)
    reads.routeAuthorization("/read-authorization", on: router)
    reads.routeEdits("/edit", on: router)
    application = Application(
      router: router, server: sockets.server(path: "/live"),
      configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Self.logger)
  }
}
