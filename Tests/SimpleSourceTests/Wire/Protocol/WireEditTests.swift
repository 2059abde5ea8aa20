// The edit messages and their server side: their JSON, a writer that checks the client's scope, an edit id
// made once however often it is sent, the answer after the batches of its version (also when a view shows
// nothing of it), and a client that stops waiting.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Edits over the wire", .timeLimit(.minutes(30)))
struct WireEditTests {
  static let operations: [WireOperation<TestSection>] = [
    .insert([TestItem("n", version: 2)], .before("a")), .insert([TestItem("m")], .after("a")),
    .insert([TestItem("o")], .end(of: "B")), .replace(TestItem("b", version: 1)), .delete(["c"]),
    .move("d", .before("a")), .move("a", .after("d")), .move("b", .end(of: "B")),
  ]

  @Test(
    "edit, confirmed and refused read back as written; format 1 has none of them; a bad operation is refused")
  func codec() throws {
    let messages: [WireMessage<TestSection>] = [
      .edit(WireEdit(id: "c-1", operations: Self.operations)), .confirmed(edit: "c-1", version: 7),
      .refused(edit: "c-2", error: WireError(.invalidEdit, "unknownItemID: item zz")),
    ]
    for message in messages {
      let data = WireCoder().encode(message)
      let (read, format) = try WireCoder().read(data, as: TestSection.self)
      #expect(format == 2)
      #expect(WireCoder().encode(read) == data, "\(String(decoding: data, as: UTF8.self))")
    }
    let edit = String(decoding: WireCoder().encode(messages[0]), as: UTF8.self)
    #expect(edit.contains(#"{"before":"a","items":[{"id":"n","version":2}],"op":"insert"}"#), "\(edit)")
    let asFormat1 = edit.replacingOccurrences(of: #""formatVersion":2"#, with: #""formatVersion":1"#)
    #expect(throws: WireError.self) { try WireCoder().read(Data(asFormat1.utf8), as: TestSection.self) }
    for bad in [
      #"{"op":"move","id":"a"}"#, #"{"op":"move","id":"a","before":"b","section":"B"}"#,
      #"{"op":"fly","id":"a"}"#,
    ] {
      let text =
        #"{"format":"simplesource","formatVersion":2,"type":"edit","id":"x","operations":["# + bad + "]}"
      #expect(throws: WireError.self, "\(bad)") {
        try WireCoder().read(Data(text.utf8), as: TestSection.self)
      }
    }
  }

  @Test("a confirmed answer written directly has the encoder's bytes; an id JSON escapes goes through it")
  func confirmedBytes() throws {
    let ids = ["c-1", "", "a b/c", "~}{", "é", "quote\"d", "back\\slash", "tab\t", "\u{7F}", "line\u{2028}"]
    for id in ids {
      for format in [2, 3] {
        for version in [0, 1_234, Int.max] {
          let coder = WireCoder(formatVersion: format)
          let encoder = JSONEncoder()
          encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
          encoder.userInfo[WireMessageFormat.userInfoKey] = format
          let message = WireMessage<TestSection>.confirmed(edit: id, version: version)
          #expect(coder.encode(message) == (try encoder.encode(message)), "\(id), format \(format)")
          let direct = coder.confirmed(
            edit: id, version: version, format: WireMessage<TestSection>.formatName)
          #expect(
            (direct == nil) == (id.utf8.contains { $0 < 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C }))
          if let direct { #expect(direct == (try encoder.encode(message)), "\(id), version \(version)") }
        }
      }
    }
  }

  @Test("each operation makes the Transaction edit it names, and refuses bad input with the source's error")
  func operationsApply() throws {
    let start = snapshot("A: a b c | B: d")
    let after = try start.applying { (transaction) throws(DataSourceError<String, String>) in
      for operation in Self.operations { try operation.apply(to: &transaction) }
    }
    #expect(after.sections == layout("A: n'' d a m | B: o b'"))
    #expect(throws: DataSourceError<String, String>.self) {
      _ = try start.applying { (transaction) throws(DataSourceError<String, String>) in
        try WireOperation<TestSection>.move("zz", .before("a")).apply(to: &transaction)
      }
    }
  }

  /// A service whose clients see the items of even version only, and that takes edits.
  static func scopedService(_ source: BasicDataSource<TestSection>) -> WireService<TestSection, String> {
    WireService(source: source, stream: "s", edits: .transactions(on: source)) { _ in { $0.version % 2 == 0 }
    }
  }

  @Test(
    "the writer refuses what the client's scope may not see or write, as if it did not exist; the source is unchanged"
  )
  func scopedWriter() async throws {
    let source = try BasicDataSource(sections: layout("A: a b' c"))
    let service = Self.scopedService(source)
    let answers = Locked<[WireMessage<TestSection>]>([])
    let session = service.session(scope: "ann") { data in
      if let message = try? WireCoder().read(data, as: TestSection.self).0 {
        answers.withLock { $0.append(message) }
      }
    }
    let refusedEdits: [[WireOperation<TestSection>]] = [
      [.delete(["b"])], [.move("a", .before("b"))], [.replace(TestItem("b", version: 2))],
      [.replace(TestItem("a", version: 1))], [.insert([TestItem("x", version: 3)], .end(of: "A"))],
      [.insert([TestItem("x")], .end(of: "A")), .delete(["zz"])],
    ]
    for (index, operations) in refusedEdits.enumerated() {
      await session.receive(bytes(.edit(WireEdit(id: "r\(index)", operations: operations))))
    }
    await session.receive(bytes(.edit(WireEdit(id: "ok", operations: [.move("c", .before("a"))]))))
    let received = answers.withLock { $0 }
    #expect(received.count == refusedEdits.count + 1)
    for (index, message) in received.dropLast().enumerated() {
      guard case .refused(let id, let error) = message else {
        Issue.record("edit r\(index) was not refused: \(message)")
        continue
      }
      #expect(id == "r\(index)" && error.code == .invalidEdit, "\(error)")
      #expect(!error.detail.contains("TestItem"), "no Swift type in the detail: \(error.detail)")
    }
    guard case .confirmed("ok", 1) = received.last else {
      Issue.record("the edit in scope was not confirmed at 1: \(String(describing: received.last))")
      return
    }
    #expect(await source.snapshot.sections == layout("A: c a b'"), "only the edit in scope was made")
    await session.close()
  }

  @Test("an edit id sent twice is made once, and both answers are the same; another edit under it is refused")
  func madeOnce() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let answers = Locked<[String]>([])
    let session = service.session { data in
      answers.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
    }
    let edit = bytes(.edit(WireEdit(id: "c-1", operations: [.insert([TestItem("n")], .end(of: "A"))])))
    await session.receive(edit)
    let other = service.session { _ in }
    await other.receive(edit)  // the same id again, on another connection (a client that reconnected)
    await session.receive(edit)
    let (version, made) = (await source.version, await source.snapshot)
    #expect(version == 1 && made.sections == layout("A: a b n"))
    let texts = answers.withLock { $0 }
    #expect(texts.count == 2 && texts[0] == texts[1] && texts[0].contains(#""type":"confirmed""#), "\(texts)")
    // Another edit under the same id (a client that counted its ids again) is refused, not made, and not
    // told the first edit's answer; the first edit's resend still is.
    let reused = bytes(.edit(WireEdit(id: "c-1", operations: [.delete(["a"])])))
    for connection in [session, other] { await connection.receive(reused) }
    // The same operations sent again with a base of their own are the same edit.
    await session.receive(
      bytes(.edit(WireEdit(id: "c-1", operations: [.insert([TestItem("n")], .end(of: "A"))], base: 7))))
    let (after, afterVersion) = (await source.snapshot, await source.version)
    #expect(after.sections == layout("A: a b n") && afterVersion == 1)
    let later = answers.withLock { Array($0.dropFirst(2)) }
    #expect(later.count == 2, "\(later)")
    #expect(later.first?.contains(#""code":"editIDReused""#) == true, "\(later)")
    #expect(later.first?.contains(#""version""#) == false, "a refusal carries no version: \(later)")
    #expect(later.last == texts[0], "the first edit's resend gets its answer: \(later)")
    let refusing = WireService(source: source, stream: "t")
    let plain = refusing.session { data in
      answers.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
    }
    await plain.receive(edit)
    #expect(
      answers.withLock { $0.last ?? "" }.contains(#""code":"editNotMade""#), "a service without a writer")
    await session.close()
    await other.close()
  }

  @Test(
    "resends that arrive while their edit is being made wait for its one answer; a cancelled caller's is not kept"
  )
  func resendsWhileMaking() async throws {
    let calls = Locked(0)
    let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
    let (gate, opening) = AsyncStream<Void>.makeStream()
    let writer = WireWriter<TestSection, NoScope> { _, _, _ throws(WireError) in
      let call = calls.withLock { calls in
        calls += 1
        return calls
      }
      enteredSignal.yield()
      for await _ in gate { break }
      if Task.isCancelled { throw WireError(.editNotMade, "cancelled") }
      return 40 + call
    }
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = WireService(source: source, stream: "s", edits: writer)
    let edit = WireEdit<TestSection>(id: "c-1", operations: [.delete(["a"])])
    var arrivals = entered.makeAsyncIterator()
    let answers = await withTaskGroup(of: Result<Int, WireError>.self) { group in
      group.addTask { await service.write(edit, scope: NoScope()) }
      await arrivals.next()  // the first delivery is being made
      for _ in 0..<4 { group.addTask { await service.write(edit, scope: NoScope()) } }
      opening.yield()
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(calls.withLock { $0 } == 1)
    #expect(answers.count == 5 && answers.allSatisfy { (try? $0.get()) == 41 }, "\(answers)")

    // A caller cancelled before its edit was made: its failure is not remembered, and a resend makes it.
    let other = WireEdit<TestSection>(id: "c-2", operations: [.delete(["a"])])
    let cancelled = Task { await service.write(other, scope: NoScope()) }
    await arrivals.next()
    cancelled.cancel()
    opening.yield()
    await #expect(throws: WireError.self) { try await cancelled.value.get() }
    let resent = Task { await service.write(other, scope: NoScope()) }
    await arrivals.next()
    opening.yield()
    #expect((try? await resent.value.get()) == 43)
  }

  @Test(
    "an edit's answer is a version the client holds already and the server resumes from, while others write")
  func confirmedVersionIsHeldAndResumable() async throws {
    let source = try BasicDataSource(sections: layout("A: a b | B: c"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let remote = RemoteDataSource<TestSection>()
    let session = service.session { data in try await remote.receive(data) }
    await remote.connect { message in Task { await session.receive(bytes(message)) } }
    #expect(await remote.reached(remoteVersion: 0))
    // A server job writes all along, so that the client's edits share batches with its writes.
    let job = Task {
      for round in 1...400 { try await source.replaceItem(TestItem("c", version: round)) }
    }
    for index in 0..<40 {
      let version = try await remote.edit([.insert([TestItem("e\(index)")], .end(of: "A"))])
      #expect((await remote.remoteVersion ?? -1) >= version, "edit \(index): answered before its batch")
      let resumption = await source.subscribe(from: version)
      #expect(resumption.isResumed, "edit \(index): version \(version) does not resume")
      #expect(resumption.subscription.snapshot.item(withID: "e\(index)") != nil)
      resumption.subscription.cancel()
    }
    try await job.value
  }

  @Test(
    "a client following a view is answered after the view's batches, also when the view shows nothing of the edit"
  )
  func answeredThroughAView() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 a2"))
    let service = WireService(
      source: source, stream: "s", queries: WireServiceTests.queries, edits: .transactions(on: source))
    let remote = RemoteDataSource<TestSection>(query: WireQueryRequest("prefix", ["prefix": .string("a")]))
    let session = service.session { data in try await remote.receive(data) }
    await remote.connect { message in Task { await session.receive(bytes(message)) } }
    #expect(await remote.reached(remoteVersion: 0))
    #expect(await remote.snapshot.sections == layout("A: a1 a2"))

    // Inserting b9 changes nothing this view shows: no batch, and the answer still comes; the client
    // showed b9 until then, and shows the view without it after.
    let outside = try await remote.edit([.insert([TestItem("b9")], .end(of: "A"))])
    let (afterOutside, shownOutside) = (await source.snapshot, await remote.snapshot)
    #expect(outside == 1 && afterOutside.sections == layout("A: a1 b1 a2 b9"))
    #expect(shownOutside.sections == layout("A: a1 a2"))
    #expect(await remote.remoteVersion == 0, "the view sent no batch")
    // An edit the view shows: the answer comes after its batch.
    let inserted = try await remote.edit([.insert([TestItem("a3")], .end(of: "A"))])
    let (held, shown, pending) = (
      await remote.remoteVersion ?? 0, await remote.snapshot, await remote.pendingEditCount
    )
    #expect(inserted == 2 && held >= 2)
    #expect(shown.sections == layout("A: a1 a2 a3") && pending == 0)
    // Refused by the server: rolled back, with its error.
    try await source.deleteItems(["a2"])
    await session.settled()
    await #expect(throws: WireError.self) { try await remote.edit([.move("a3", .before("b9"))]) }
    do {
      _ = try await remote.edit([.delete(["a2"])])
      Issue.record("deleting what is gone was not refused")
    } catch {
      #expect(error.code == .invalidEdit, "refused on the client: the view no longer holds a2")
    }
    await session.close()
  }

  @Test("a client that subscribes and then sends an edit reads its reset before the edit's refusal")
  func refusalAfterTheStart() async throws {
    // A large state, so that the reset takes far longer to encode than the edit takes to be refused: a
    // refusal that did not wait for the subscription's first message (sent by its own task) would overtake it.
    let items = (0..<20_000).map { TestItem("i\($0)") }
    let source = try BasicDataSource(sections: [TestSection(id: "A", header: "A", items: items)])
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    for round in 0..<5 {
      let received = Locked<[String]>([])
      let session = service.session { data in
        received.withLock { $0.append(String(decoding: data.suffix(80), as: UTF8.self)) }
      }
      await session.receive(subscribe(nil))
      await session.receive(bytes(.edit(WireEdit(id: "r\(round)", operations: [.delete(["zz"])]))))
      let texts = received.withLock { $0 }
      #expect(texts.count == 2, "\(texts)")
      #expect(
        texts.first?.contains(#""type":"reset""#) == true
          && texts.last?.contains(#""type":"refused""#) == true,
        "round \(round): \(texts)")
      await session.close()
    }
  }

  @Test("settling and answering a session reach a version whose batch cancelled out for a lagging client")
  func cancelledOutVersion() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    // The client's first message (the reset) is held until released: meanwhile two writes that cancel out
    // are published, so the session's next batch composes to nothing.
    let (held, release) = AsyncStream.makeStream(of: Void.self)
    let first = Locked(true)
    let received = Locked<[String]>([])
    let session = service.session { data in
      let isFirst = first.withLock { value in
        defer { value = false }
        return value
      }
      if isFirst {
        for await _ in held { break }
      }
      received.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
    }
    let subscribing = Task { await session.receive(subscribe(nil)) }
    await subscribing.value
    try await source.moveItem("b", before: "a")
    await source.settled()
    try await source.moveItem("b", after: "a")
    await source.settled()
    release.yield()
    await session.settled()  // waited forever for version 2, which no batch carries to this client
    await session.receive(bytes(.edit(WireEdit(id: "e", operations: [.replace(TestItem("a"))]))))
    let texts = received.withLock { $0 }
    #expect(
      texts.count == 2 && texts[1].contains(#""type":"confirmed""#) && texts[1].contains(#""version":2"#),
      "\(texts)")
    await session.close()
  }

  @Test(
    "a caller that stops waiting gets unanswered; the edit stays pending, is sent, and its answer is kept")
  func stopsWaiting() async throws {
    let remote = RemoteDataSource<TestSection>(clientID: "c")
    try await remote.receive(.reset(stream: "s", version: 0, snapshot: snapshot("A: a b")))
    // `edit` is `submit` then `answer(to:)`: the edit is pending before anyone waits for its answer.
    let id = try await remote.submit([.move("b", .before("a"))])
    let waiting = Task { try await remote.answer(to: id) }
    waiting.cancel()
    await #expect(throws: WireError(.unanswered, "the task waiting for the edit was cancelled")) {
      try await waiting.value
    }
    #expect(await remote.snapshot.sections == layout("A: b a"), "still shown")
    let sent = Locked<[WireMessage<TestSection>]>([])
    await remote.connect { message in sent.withLock { $0.append(message) } }
    #expect(sent.withLock { $0.map(\.typeName) } == ["subscribe", "edit"], "sent on the next connection")
    try await remote.receive(
      .batch(
        WireBatch(
          UpdateBatch(from: 0, to: 1, changeset: Changeset(from: snapshot("A: a b"), to: snapshot("A: b a"))))
      ))
    try await remote.receive(.confirmed(edit: id, version: 1))
    #expect(try await remote.answer(to: id) == 1, "the answer is kept for a later caller")
    let (finalShown, finalPending) = (await remote.snapshot, await remote.pendingEditCount)
    #expect(finalShown.sections == layout("A: b a") && finalPending == 0)
    await #expect(throws: WireError.self) { try await remote.answer(to: "c-9") }
  }
}
