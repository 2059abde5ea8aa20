// The browser client's module, served: its text, its type, and a revalidation that costs no body.

import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SimpleSourceHummingbird
import Testing

@Suite("The browser client's module", .timeLimit(.minutes(2)))
struct BrowserClientTests {
  @Test("served as JavaScript with a tag of its bytes; the same tag answers 304 without a body, another 200")
  func servesTheModule() async throws {
    let router = Router()
    WireBrowserClient.route("/wire-client.js", on: router)
    #expect(WireBrowserClient.script.contains("export class WireClient"))
    try await Application(router: router).test(.router) { client in
      let first = try await client.execute(uri: "/wire-client.js", method: .get)
      #expect(first.status == .ok)
      #expect(first.headers[.contentType] == "text/javascript; charset=utf-8")
      #expect(String(buffer: first.body) == WireBrowserClient.script)
      let tag = try #require(first.headers[.eTag])

      let again = try await client.execute(uri: "/wire-client.js", method: .get, headers: [.ifNoneMatch: tag])
      #expect(again.status == .notModified)
      #expect(again.body.readableBytes == 0)
      #expect(again.headers[.eTag] == tag)

      let stale = try await client.execute(
        uri: "/wire-client.js", method: .get, headers: [.ifNoneMatch: "\"another\""])
      #expect(stale.status == .ok)
    }
  }
}
