// Edits posted over HTTP, for clients that follow their views by reads: answers once per user and edit id,
// refusals as HTTP statuses with the wire's errors, and the browser client without WebSockets, in Node,
// against a live server.

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SimpleSource
import SimpleSourceHummingbird
import Testing

@Suite("Edits over HTTP", .timeLimit(.minutes(5)))
struct EditsOverHTTPTests {
  static func post(_ body: some Sequence<UInt8>, as user: String?, with client: some TestClientProtocol)
    async throws -> (HTTPResponse.Status, HTTPFields, WireMessage<Notes>)
  {
    var headers: HTTPFields = [.contentType: "application/json"]
    if let user { headers[ReadingTests.user] = user }
    let response = try await client.execute(
      uri: "/edit", method: .post, headers: headers, body: ByteBuffer(bytes: Array(body)))
    let message = try WireCoder().decode(Data(buffer: response.body), as: Notes.self)
    return (response.status, response.headers, message)
  }

  @Test(
    "an edit is made once per user and id; a resend gets its answer; bad bodies and credentials are refused")
  func answers() async throws {
    let notes = try await NotesServer()
    try await notes.application.test(.live) { client in
      let edit = WireEdit<Notes>(
        id: "e1", operations: [.insert([Note(id: "n1", text: "New", owner: "ann")], .end(of: "notes"))])
      let body = WireCoder().encode(WireMessage.edit(edit))
      let (status, headers, made) = try await Self.post(body, as: "ann", with: client)
      #expect(status == .ok && headers[.cacheControl] == "no-store")
      guard case .confirmed("e1", let version) = made else {
        Issue.record("confirmed: \(made)")
        return
      }
      #expect(await notes.source.snapshot.sections[0].items.map(\.id) == ["plan", "diary", "n1"])
      // Its response lost, the client posts it again: the same answer, nothing made twice.
      guard case .confirmed("e1", version) = try await Self.post(body, as: "ann", with: client).2 else {
        Issue.record("the resend's answer")
        return
      }
      #expect(await notes.source.version.number == version)
      // Bob cannot delete Ann's note: he does not see it.
      let theirs = WireEdit<Notes>(id: "e1", operations: [.delete(["diary"])])
      guard
        case .refused("e1", _) = try await Self.post(
          WireCoder().encode(WireMessage.edit(theirs)), as: "bob", with: client
        ).2
      else {
        Issue.record("Bob's delete of Ann's note refused")
        return
      }
      // Credentials that do not read, a body that is not an edit, one too large: refused, nothing made.
      for (body, user, expected, code) in [
        (Array(body), "", HTTPResponse.Status.unauthorized, WireError.Code.unauthorized),
        (Array("{".utf8), "ann", .badRequest, .malformed),
        (
          Array(WireCoder().encode(WireMessage<Notes>.subscribe(stream: nil, from: nil, query: nil))), "ann",
          .badRequest, .unexpectedMessage
        ),
        (
          [UInt8](repeating: 32, count: WireCoder.maxClientMessageBytes + 1), "ann", .contentTooLarge,
          .tooLarge
        ),
      ] {
        let (status, headers, message) = try await Self.post(body, as: user, with: client)
        #expect(status == expected && headers[.cacheControl] == "no-store")
        guard case .error(let error) = message else {
          Issue.record("an error message: \(message)")
          continue
        }
        #expect(error.code == code, "\(error)")
      }
      #expect(await notes.source.version.number == version)
    }
  }

  /// Runs `script` (in `BrowserClient/`) in Node with the module and `base`, and expects it to print "ok".
  static func runNode(_ script: String, base: String) async throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(BrowserClientModelTests.node))
    process.arguments = [
      BrowserClientModelTests.folder.appendingPathComponent("BrowserClient/\(script)").path,
      BrowserClientModelTests.module, base,
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    // Waited for off the test's threads: the server answers Node on them meanwhile.
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      process.terminationHandler = { _ in done.resume() }
      do { try process.run() } catch { done.resume() }
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationStatus == 0 && text.hasPrefix("ok"), "\(script): \(text)")
  }

  @Test(
    "the browser client posts an edit again after a pause when a post fails, without waiting for a read",
    .enabled(if: BrowserClientModelTests.node != nil, "needs node on PATH")
  )
  func browserClientRetriesPosts() async throws {
    // Long polls that hold for an hour: the view changes only by the edit, so no read answers meanwhile.
    let notes = try await NotesServer(hold: 3600)
    try await notes.application.test(.live) { client in
      try await Self.runNode("edits-retried.mjs", base: "http://127.0.0.1:\(try #require(client.port))")
    }
    #expect(await notes.source.snapshot.sections[0].items.map(\.id) == ["plan", "diary", "n1"])
  }

  @Test(
    "the browser client without WebSockets: edits shown at once and kept until read, a refusal rolled back, one its search never shows dropped once a read covers it",
    .enabled(if: BrowserClientModelTests.node != nil, "needs node on PATH")
  )
  func browserClientEditsByPost() async throws {
    let notes = try await NotesServer(hold: 1)
    try await notes.source.appendItems([Note(id: "bobs", text: "Bob's", owner: "bob")], toSection: "notes")
    try await notes.application.test(.live) { client in
      try await Self.runNode("edits-by-post.mjs", base: "http://127.0.0.1:\(try #require(client.port))")
    }
    let held = await notes.source.snapshot.sections[0].items.map(\.id)
    #expect(held == ["plan", "diary", "bobs", "n1", "n3", "n2"])
  }
}
