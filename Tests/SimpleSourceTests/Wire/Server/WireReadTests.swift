// Reads of a view over HTTP: the changes after an offset, long polls, answers a cache may share, tokens that
// hold a view to its scope, and a remote source that follows by reads alone.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Reading a view over HTTP", .timeLimit(.minutes(30)))
struct WireReadTests {
  static let secret = Array("a secret of the service, 32 bytes".utf8)

  /// Items of even version belong to scope 0, odd to scope 1; `prefix` as the service tests declare it.
  static func service(_ source: BasicDataSource<TestSection>, limits: WireLimits = WireLimits())
    -> WireService<TestSection, Int>
  {
    WireService(source: source, stream: "s", queries: WireServiceTests.queries, limits: limits) { scope in
      { $0.version % 2 == scope }
    }
  }

  /// As ``service(_:limits:)``, taking edits made on `source`.
  static func editingService(_ source: BasicDataSource<TestSection>) -> WireService<TestSection, Int> {
    WireService(
      source: source, stream: "s", queries: WireServiceTests.queries, limits: WireLimits(),
      edits: .transactions(on: source),
      rows: { (scope: Int) in { (item: TestItem) in item.version % 2 == scope } })
  }

  static func policy(hold: Double = 20, now: Double = 1_000_000) -> WireReadPolicy {
    var policy = WireReadPolicy(secret: secret, hold: hold)
    policy.now = { now }
    return policy
  }

  static func messages(_ answer: WireReadAnswer) throws -> [WireMessage<TestSection>] {
    try answer.messages.map { try WireCoder().decode($0, as: TestSection.self) }
  }

  // MARK: - Digests

  @Test("SHA-256 and HMAC-SHA-256 give the published test vectors (FIPS 180-4, RFC 4231)")
  func digests() {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    #expect(hex(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
      hex(SHA256.digest(Array("abc".utf8)))
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      hex(SHA256.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(
      hex(SHA256.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1000)))
        == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    #expect(
      hex(SHA256.authenticationCode(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20)))
        == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    #expect(
      hex(SHA256.authenticationCode(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    #expect(
      hex(
        SHA256.authenticationCode(
          Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
          key: [UInt8](repeating: 0xaa, count: 131)))
        == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
  }

  @Test("URL-safe Base64 gives RFC 4648's vectors, reads back every length, and refuses other spellings")
  func base64URL() {
    let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE"]
    for (plain, encoded) in vectors.merging(["foobar": "Zm9vYmFy"], uniquingKeysWith: { $1 }) {
      #expect(WireReadPolicy.base64URL(Array(plain.utf8)) == encoded)
      #expect(WireReadPolicy.bytes(base64URL: encoded[...]) == Data(plain.utf8))
    }
    // The two characters that differ from standard Base64, and every byte value, at every length mod 3.
    #expect(WireReadPolicy.base64URL([0xFB, 0xFF]) == "-_8")
    for length in 0...7 {
      let bytes = (0..<256).map { UInt8(truncatingIfNeeded: $0 * 37 + length) }
      for start in stride(from: 0, to: 256 - length, by: 5) {
        let slice = Array(bytes[start..<start + length])
        let standard = Data(slice).base64EncodedString()
        let expected = String(
          standard.filter { $0 != "=" }.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        #expect(WireReadPolicy.base64URL(slice) == expected)
        #expect(WireReadPolicy.bytes(base64URL: expected[...]) == Data(slice))
      }
    }
    // One spelling per bytes: no padding, no standard characters, no length that makes no bytes, no bits
    // set past the last byte ("Zh" would read as "f" too).
    for other in ["Zg==", "Zm+v", "Zm/v", "Z", "Zm9vY", "Zh", "Zm9", "Zm 9v", "Zm9v\n", "é"] {
      #expect(WireReadPolicy.bytes(base64URL: other[...]) == nil, "\(other)")
    }
  }

  // MARK: - The URL form

  @Test("a read's URL form reads back as the same read, and every wrong item is named")
  func urlForm() throws {
    let reads = [
      WireRead(view: .query(nil)),
      WireRead(
        view: .query(WireQueryRequest("prefix", ["prefix": .string("a/b")])),
        offset: .init(stream: "s_x.v1", version: 3)),
      WireRead(view: .token("abc.def"), offset: .init(stream: "s", version: 0), live: true, cursor: 7),
    ]
    for read in reads { #expect(try WireRead(queryItems: read.queryItems) == read) }
    #expect(WireOffset("12_s_x")?.stream == "s_x")
    #expect(WireOffset("-1_s") == nil)
    #expect(WireOffset("3_") == nil)
    let wrong: [([(name: String, value: String)], String)] = [
      ([("offset", "x")], "offset"), ([("live", "yes")], "live"), ([("live", "long-poll")], "long poll"),
      ([("cursor", "-2")], "cursor"), ([("view", "{")], "view"),
      ([("token", "a"), ("view", #"{"name":"p"}"#)], "both"),
      ([("token", "a"), ("token", "b")], "twice"), ([("from", "1")], "from"),
    ]
    for (items, named) in wrong {
      #expect {
        try WireRead(queryItems: items)
      } throws: { error in
        (error as? WireError)?.code == .malformed && "\(error)".contains(named)
      }
    }
  }

  // MARK: - Answers

  @Test(
    "a read by query holds nothing: the view's state, private, with a token; by token from there: the changes, shared"
  )
  func readByQueryThenByToken() async throws {
    let source = try BasicDataSource(sections: layout("A: a b' c d'"))
    let service = Self.service(source)
    let policy = Self.policy()
    let first = await service.read(WireRead(view: .query(nil)), scope: 0, policy: policy)
    #expect(first.status == 200)
    #expect(first.header("Cache-Control") == "private, no-store")
    #expect(first.header("Stream-Up-To-Date") == "true")
    let token = try #require(first.header(WireReadAnswer.Header.token))
    let offset = try #require(first.header("Stream-Next-Offset").flatMap(WireOffset.init))
    guard case .reset(_, _, let snapshot) = try Self.messages(first).first else {
      Issue.record("the first answer is a reset")
      return
    }
    #expect(snapshot.sections == layout("A: a c"), "scope 0 sees the items of even version")

    try await source.appendItems([TestItem("e"), TestItem("f", version: 1)], toSection: "A")
    try await source.deleteItems(["a"])
    let read = WireRead(view: .token(token), offset: offset)
    let next = await service.read(read, scope: 0, policy: policy)
    #expect(next.status == 200)
    #expect(next.header("Cache-Control") == "public, max-age=60, stale-while-revalidate=300")
    #expect(next.header(WireReadAnswer.Header.token) == nil, "the token is this period's")
    let messages = try Self.messages(next)
    guard case .resumed(_, offset.version) = messages.first else {
      Issue.record("resumed from the offset: \(messages)")
      return
    }
    let remote = RemoteDataSource<TestSection>()
    for message in try Self.messages(first) + messages { try await remote.receive(message) }
    #expect(await remote.snapshot.sections == layout("A: c e"))
    #expect(next.header("Stream-Next-Offset") == WireOffset(stream: offset.stream, version: 2).description)

    // Every reader of the same read is answered with the same bytes, and a cache revalidates with the tag.
    let again = await service.read(read, scope: 0, policy: policy)
    #expect(again.body == next.body)
    let tag = try #require(next.header("ETag"))
    #expect(again.header("ETag") == tag)
    let unchanged = await service.read(read, scope: 0, ifNoneMatch: "\"other\", \(tag)", policy: policy)
    #expect(unchanged.status == 304)
    #expect(unchanged.body.isEmpty)
    #expect(unchanged.header("Stream-Next-Offset") == next.header("Stream-Next-Offset"))
    // A cache that compressed the answer weakened its tag, and revalidates with the weak one.
    let weakened = await service.read(read, scope: 0, ifNoneMatch: "W/\(tag)", policy: policy)
    #expect(weakened.status == 304)
    let other = await service.read(read, scope: 0, ifNoneMatch: "W/\"other\"", policy: policy)
    #expect(other.status == 200 && other.body == next.body)
  }

  // MARK: - Edits over HTTP

  @Test(
    "an edit over HTTP is made once per scope and id: confirmed with its version, the same answer to a resend, refusals named"
  )
  func editsOverHTTP() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = Self.editingService(source)
    func post(_ edit: WireEdit<TestSection>, scope: Int = 0) async throws -> (
      WireReadAnswer, WireMessage<TestSection>
    ) {
      let answer = await service.edit(WireCoder().encode(WireMessage.edit(edit)), scope: scope)
      #expect(answer.status == 200 && answer.header("Cache-Control") == "no-store")
      return (answer, try WireCoder().decode(answer.body, as: TestSection.self))
    }
    let insert = WireEdit<TestSection>(id: "e1", operations: [.insert([TestItem("c")], .end(of: "A"))])
    let (_, made) = try await post(insert)
    guard case .confirmed("e1", let version) = made else {
      Issue.record("confirmed: \(made)")
      return
    }
    #expect(version == 1)
    let afterInsert = await source.snapshot.sections
    #expect(afterInsert == layout("A: a b c"))

    // A resend (its response was lost) gets the same answer and makes nothing again; the same id asking for
    // something else is refused; the same id from another scope is another edit.
    let (resent, _) = try await post(insert)
    #expect(resent.body == WireCoder().encode(made))
    #expect(await source.version.number == 1)
    let other = WireEdit<TestSection>(id: "e1", operations: [.delete(["a"])])
    guard case .refused("e1", let reused) = try await post(other).1 else {
      Issue.record("refused as reused")
      return
    }
    #expect(reused.code == .editIDReused)
    let theirs = WireEdit<TestSection>(
      id: "e1", operations: [.insert([TestItem("o", version: 1)], .end(of: "A"))])
    guard case .confirmed("e1", 2) = try await post(theirs, scope: 1).1 else {
      Issue.record("another scope's e1 is its own edit")
      return
    }
    #expect(await source.snapshot.sections == layout("A: a b c o'"))

    // An edit that does not apply is answered refused, with why, and changes nothing.
    guard case .refused("e2", let error) = try await post(WireEdit(id: "e2", operations: [.delete(["zz"])])).1
    else {
      Issue.record("refused: no such item")
      return
    }
    #expect(error.detail.contains("zz"), "\(error)")
    #expect(await source.version.number == 2)

    // A body that is not an edit is 400 with an error message naming what was wrong, and changes nothing.
    for (body, code) in [
      (Data("{".utf8), WireError.Code.malformed),
      (
        WireCoder().encode(WireMessage<TestSection>.subscribe(stream: nil, from: nil, query: nil)),
        .unexpectedMessage
      ),
      (Data(count: WireCoder.maxClientMessageBytes + 1), .tooLarge),
    ] {
      let answer = await service.edit(body, scope: 0)
      #expect(answer.status == 400 && answer.header("Cache-Control") == "no-store")
      guard case .error(let refusal) = try WireCoder().decode(answer.body, as: TestSection.self) else {
        Issue.record("an error message")
        continue
      }
      #expect(refusal.code == code, "\(refusal)")
    }
    #expect(await source.snapshot.sections == layout("A: a b c o'"))
  }

  @Test("a read says the source's version it covers: past its offset when the view skipped versions")
  func coveredVersion() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = Self.service(source)
    let policy = Self.policy()
    let read = WireRead(view: .query(WireQueryRequest("prefix", ["prefix": .string("a")])))
    let first = await service.read(read, scope: 0, policy: policy)
    #expect(first.header(WireReadAnswer.Header.sourceVersion) == "0")
    // Two versions the view does not show: its offset stays, the covered version moves on.
    try await source.appendItems([TestItem("b2")], toSection: "A")
    try await source.appendItems([TestItem("c")], toSection: "A")
    let offset = try #require(first.header(WireReadAnswer.Header.nextOffset).flatMap(WireOffset.init))
    let next = await service.read(
      WireRead(view: .token(try #require(first.header(WireReadAnswer.Header.token))), offset: offset),
      scope: 0, policy: policy)
    #expect(next.status == 200)
    #expect(next.header(WireReadAnswer.Header.nextOffset) == offset.description)
    #expect(next.header(WireReadAnswer.Header.sourceVersion) == "2")
  }

  @Test("a read at the newest version, not live, says nothing changed and is never kept stale")
  func readAtTheNewest() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = Self.service(source)
    let first = await service.read(WireRead(view: .query(nil)), scope: 0, policy: Self.policy())
    let token = try #require(first.header(WireReadAnswer.Header.token))
    let offset = first.header("Stream-Next-Offset").flatMap(WireOffset.init)
    let read = await service.read(
      WireRead(view: .token(token), offset: offset), scope: 0, policy: Self.policy())
    #expect(read.status == 200)
    #expect(read.header("Cache-Control") == "public, max-age=1")
    #expect(read.header("Stream-Up-To-Date") == "true")
    #expect(read.messages.count == 1)
  }

  @Test("a long poll waits for the next version, whether it is written before or while the read waits")
  func longPollAnswersTheNextVersion() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = Self.service(source)
    let first = await service.read(WireRead(view: .query(nil)), scope: 0, policy: Self.policy())
    let token = try #require(first.header(WireReadAnswer.Header.token))
    let offset = try #require(first.header("Stream-Next-Offset").flatMap(WireOffset.init))
    let polling = Task {
      await service.read(
        WireRead(view: .token(token), offset: offset, live: true, cursor: 3), scope: 0, policy: Self.policy())
    }
    try await source.appendItems([TestItem("b")], toSection: "A")
    let answer = await polling.value
    #expect(answer.status == 200)
    let messages = try Self.messages(answer)
    #expect(messages.count == 2, "resumed, then the batch: \(messages)")
    #expect(answer.header("Stream-Next-Offset") == WireOffset(stream: offset.stream, version: 1).description)
    let cursor = try #require(answer.header("Stream-Cursor").flatMap(Int.init))
    #expect(cursor == 1_000_000 / 20, "the period's number, past the cursor sent")
  }

  @Test("a long poll that sees no change within its hold is a 204 with a cursor past the one sent")
  func longPollTimesOut() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = Self.service(source)
    let policy = Self.policy(hold: 0.03)
    let first = await service.read(WireRead(view: .query(nil)), scope: 0, policy: policy)
    let token = try #require(first.header(WireReadAnswer.Header.token))
    let offset = first.header("Stream-Next-Offset").flatMap(WireOffset.init)
    let cursor = 1_000_000 / 20 + 5
    let answer = await service.read(
      WireRead(view: .token(token), offset: offset, live: true, cursor: cursor), scope: 0, policy: policy)
    #expect(answer.status == 204)
    #expect(answer.body.isEmpty)
    #expect(answer.header("Stream-Cursor") == String(cursor + 1), "never a cursor the reader sent")
    #expect(answer.header("Cache-Control") == "public, max-age=1")
    #expect(answer.header("Stream-Next-Offset") == offset?.description)
  }

  @Test("a reader of another stream, or of a version no longer retained, is sent the view's state")
  func resetForAnUnknownOffset() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = Self.service(source)
    let first = await service.read(WireRead(view: .query(nil)), scope: 1, policy: Self.policy())
    let token = try #require(first.header(WireReadAnswer.Header.token))
    let answer = await service.read(
      WireRead(view: .token(token), offset: WireOffset(stream: "gone", version: 9), live: true), scope: 1,
      policy: Self.policy())
    #expect(answer.status == 200)
    guard case .reset(_, 0, let snapshot) = try Self.messages(answer).first else {
      Issue.record("a reset")
      return
    }
    #expect(snapshot.sections == layout("A:"), "scope 1 sees no item of even version")
  }

  // MARK: - Tokens

  @Test("a token is refused to another scope, altered, forged, for another service, or past its end")
  func tokensHoldTheirScope() async throws {
    let source = try BasicDataSource(sections: layout("A: a b'"))
    let service = Self.service(source)
    let policy = Self.policy()
    let first = await service.read(WireRead(view: .query(nil)), scope: 0, policy: policy)
    let token = try #require(first.header(WireReadAnswer.Header.token))
    let offset = first.header("Stream-Next-Offset").flatMap(WireOffset.init)
    func refusal(
      _ token: String, scope: Int = 0, policy: WireReadPolicy = Self.policy(),
      on service: WireService<TestSection, Int>? = nil
    ) async throws -> WireError? {
      let answer = await (service ?? Self.service(source)).read(
        WireRead(view: .token(token), offset: offset), scope: scope, policy: policy)
      #expect(answer.header("Cache-Control") == "no-store")
      guard case .error(let error) = try WireCoder().decode(answer.body, as: TestSection.self) else {
        return nil
      }
      #expect(answer.status == 403)
      return error
    }
    #expect(try await refusal(token, scope: 1)?.code == .readTokenInvalid)
    var altered = Array(token)
    altered[3] = altered[3] == "A" ? "B" : "A"
    #expect(try await refusal(String(altered))?.code == .readTokenInvalid)
    let payload = token.split(separator: ".")[0]
    #expect(try await refusal(payload + ".AAAAAAAAAAAAAAAAAAAAAA")?.code == .readTokenInvalid)
    #expect(try await refusal("not a token")?.code == .readTokenInvalid)
    let other = WireService(source: source, stream: "t", queries: WireServiceTests.queries) { (scope: Int) in
      { $0.version % 2 == scope }
    }
    #expect(try await refusal(token, on: other)?.code == .readTokenInvalid)
    var otherSecret = WireReadPolicy(secret: Array("another secret of 32 bytes or so".utf8))
    otherSecret.now = { 1_000_000 }
    #expect(try await refusal(token, policy: otherSecret)?.code == .readTokenInvalid)
    // Issued in the period of 1,000,000 s (600 s long), it ends two periods on.
    let end = Double((1_000_000 / 600 + 2) * 600)
    #expect(try await refusal(token, policy: Self.policy(now: end))?.code == .readTokenExpired)
    try await source.appendItems([TestItem("c")], toSection: "A")
    let late = await service.read(
      WireRead(view: .token(token), offset: offset), scope: 0, policy: Self.policy(now: end - 10))
    #expect(late.status == 200)
    #expect(
      late.header("Cache-Control")?.hasPrefix("public, max-age=10") == true, "never kept past the token's end"
    )
    #expect(late.header(WireReadAnswer.Header.token) != token, "a token of the later period to go on with")
    #expect(late.header(WireReadAnswer.Header.token) != nil)
  }

  @Test("a cache asks whether a reader may make a read: its token and scope, never past the token's end")
  func authorizations() async throws {
    let source = try BasicDataSource(sections: layout("A: a b'"))
    let service = Self.service(source)
    let token = Self.policy().token(for: nil, scope: 0, stream: "s")
    let read = WireRead(view: .token(token), offset: WireOffset(stream: "s", version: 0))
    let allowed = service.authorize(read, scope: 0, policy: Self.policy())
    #expect(allowed.status == 204)
    #expect(allowed.header("X-Accel-Expires") == "60")
    #expect(allowed.header("Cache-Control") == "private, max-age=60")
    let end = Double((1_000_000 / 600 + 2) * 600)
    #expect(
      service.authorize(read, scope: 0, policy: Self.policy(now: end - 7)).header("X-Accel-Expires") == "7")
    #expect(service.authorize(read, scope: 1, policy: Self.policy()).status == 403)
    #expect(service.authorize(read, scope: 0, policy: Self.policy(now: end)).status == 403)
    let byQuery = service.authorize(WireRead(view: .query(nil)), scope: 1, policy: Self.policy())
    #expect(byQuery.status == 204)
    #expect(byQuery.header("Cache-Control") == "no-store")
  }

  @Test(
    "tokens of one view and scope issued in one period are one string, so their readers share a cache key")
  func tokensOfAPeriodAreOne() throws {
    let policy = Self.policy()
    let later = Self.policy(now: 1_000_000 + 100)
    let query = WireQueryRequest("prefix", ["prefix": .string("a")])
    let start = Double(1_000_000 / 600 * 600)
    #expect(
      policy.token(for: query, scope: 0, stream: "s")
        == Self.policy(now: start).token(for: query, scope: 0, stream: "s"))
    #expect(
      policy.token(for: query, scope: 0, stream: "s")
        != Self.policy(now: start + 600).token(for: query, scope: 0, stream: "s"))
    #expect(
      policy.token(for: query, scope: 0, stream: "s") != policy.token(for: query, scope: 1, stream: "s"))
    #expect(policy.token(for: query, scope: 0, stream: "s") != policy.token(for: nil, scope: 0, stream: "s"))
    let payload = try policy.verify(later.token(for: query, scope: 0, stream: "s"), scope: 0, stream: "s")
    #expect(payload.view == query)
  }

  @Test("a read by query is checked and put in canonical form; a bad one is a 400 naming what is wrong")
  func badViews() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = Self.service(source)
    let unknown = await service.read(
      WireRead(view: .query(WireQueryRequest("nope"))), scope: 0, policy: Self.policy())
    #expect(unknown.status == 400)
    #expect(String(decoding: unknown.body, as: UTF8.self).contains("unknownQuery"))
    let bad = await service.read(
      WireRead(view: .query(WireQueryRequest("prefix", ["prefix": .integer(1)]))), scope: 0,
      policy: Self.policy())
    #expect(bad.status == 400)
    #expect(String(decoding: bad.body, as: UTF8.self).contains("invalidParameters"))
    let long = await service.read(
      WireRead(view: .query(WireQueryRequest("prefix", ["prefix": .string("abcdefghij")]))), scope: 0,
      policy: Self.policy())
    #expect(long.status == 400)
  }

  @Test("reads are not counted as subscribes: a cache's reads follow versions, not readers")
  func readsAreNotRatedAsSubscribes() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let limits = WireLimits(subscribes: WireRate(perSecond: 0.001, burst: 1))
    let service = Self.service(source, limits: limits)
    for _ in 0..<5 {
      let answer = await service.read(WireRead(view: .query(nil)), scope: 0, policy: Self.policy())
      #expect(answer.status == 200)
    }
    let session = service.session(scope: 0) { _ in }
    await session.receive(subscribe(nil))
    #expect(await session.isSubscribed, "a subscribe has its burst of one")
    await session.close()
  }

  // MARK: - Following by reads

  @Test("a remote source follows a query by reads alone: by query once, then by token, to every version")
  func remoteFollowsByReads() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let service = Self.service(source)
    let query = WireQueryRequest("prefix", ["prefix": .string("x")])
    let remote = RemoteDataSource<TestSection>(query: query)
    let views = Locked<[WireRead.View]>([])
    let following = Task {
      try await remote.follow { read in
        views.withLock { $0.append(read.view) }
        return await service.read(read, scope: 0, policy: Self.policy())
      }
    }
    var last = 0
    for round in 0..<6 {
      let id = "x\(round)"
      last = try await source.appendItems([TestItem(id, version: round % 2 == 0 ? 0 : 2)], toSection: "A")
        .number
      if round == 3 { last = try await source.deleteItems(["x1"]).number }
    }
    #expect(await remote.reached(remoteVersion: last))
    following.cancel()
    _ = try? await following.value
    #expect(await remote.snapshot.sections == layout("A: x0 x2 x3'' x4 x5''"))
    let read = views.withLock { $0 }
    #expect(read.first == .query(query))
    #expect(read.dropFirst().allSatisfy { if case .token = $0 { true } else { false } })
  }

  @Test(
    "a remote source following by reads posts its edits in order: each returns once what it reads covers it, a refusal rolls back"
  )
  func remotePostsByReads() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let service = Self.editingService(source)
    let policy = Self.policy(hold: 0.3)
    let remote = RemoteDataSource<TestSection>(query: WireQueryRequest("prefix", ["prefix": .string("x")]))
    let following = Task {
      try await remote.follow(
        reading: { await service.read($0, scope: 0, policy: policy) },
        posting: { await service.edit($0, scope: 0) })
    }
    #expect(await remote.reached(remoteVersion: 0))

    // Two edits at once, the second naming what the first makes: posted one after the other, both made.
    let inserted = try await remote.submit([.insert([TestItem("x1")], .end(of: "A"))])
    let replaced = try await remote.submit([.replace(TestItem("x1", version: 2))])
    let first = try await remote.answer(to: inserted)
    let second = try await remote.answer(to: replaced)
    let made = await source.version.number
    #expect(first <= second && second == made, "each the version held when it was answered")
    #expect(await remote.snapshot.sections == layout("A: x1''"))
    #expect(await remote.reached(remoteVersion: second), "answered once the view shows it")

    // An edit the view never shows (outside its prefix): answered once a read covers its version.
    let outside = try await remote.edit([.insert([TestItem("y1")], .end(of: "A"))])
    let madeOutside = await source.version.number
    #expect(outside == madeOutside)
    #expect(await remote.snapshot.sections == layout("A: x1''"), "no longer shown on top")
    #expect(await source.snapshot.sections == layout("A: a b c x1'' y1"))

    // An id the view does not show but the source holds: refused by the sender, rolled back.
    await #expect(throws: WireError.self) { try await remote.edit([.insert([TestItem("a")], .end(of: "A"))]) }
    #expect(await remote.snapshot.sections == layout("A: x1''"))
    #expect(await source.snapshot.sections == layout("A: a b c x1'' y1"))
    following.cancel()
    _ = try? await following.value
  }

  @Test("a remote source posts an edit again after a pause when a post fails, without waiting for a read")
  func remoteRetriesPosts() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = Self.editingService(source)
    // Long polls that hold for an hour: the view changes only by the edit, so no read answers meanwhile.
    let policy = Self.policy(hold: 3600)
    let remote = RemoteDataSource<TestSection>()
    let failures = Locked(2)
    let following = Task {
      try await remote.follow(
        reading: { await service.read($0, scope: 0, policy: policy) },
        posting: { body in
          if failures.withLock({ failures in
            defer { failures -= 1 }
            return failures > 0
          }) {
            throw URLError(.networkConnectionLost)
          }
          return await service.edit(body, scope: 0)
        })
    }
    #expect(await remote.reached(remoteVersion: 0))
    let version = try await remote.edit([.insert([TestItem("b")], .end(of: "A"))])
    #expect(failures.withLock { $0 } == -1, "two posts failed, the third made it")
    #expect(await remote.reached(remoteVersion: version))
    #expect(await source.snapshot.sections == layout("A: a b"))
    following.cancel()
    _ = try? await following.value
  }
}
