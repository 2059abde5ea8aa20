// A remote source connected to a service in the same process in one call: it starts with a reset, edits
// are answered, a closed connection keeps edits pending, and connecting again resumes and makes them once.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("In-process connections", .timeLimit(.minutes(30)))
struct WireConnectionTests {
  @Test("a connection starts with a reset, answers edits, keeps them pending while closed, and resumes")
  func connectEditCloseResume() async throws {
    let source = try BasicDataSource(sections: layout("A: a b | B: c"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let remote = RemoteDataSource<TestSection>()
    let connection = await service.connect(remote)
    #expect(await connection.started() == .reset(version: 0))
    #expect(await remote.snapshot == source.snapshot)

    let made = try await remote.edit([.insert([TestItem("d")], .end(of: "B"))])
    #expect(await source.snapshot.sections == layout("A: a b | B: c d"))
    await connection.settled()
    #expect(await remote.remoteVersion == made)

    await connection.close()
    // Closed: the client's edit waits, the server's own writer goes on.
    let id = try await remote.submit([.delete(["a"])])
    try await source.appendItems([TestItem("e")], toSection: "A")
    #expect(await remote.pendingEditCount == 1)
    #expect(await source.snapshot.sections == layout("A: a b e | B: c d"), "nothing was sent")

    let again = await service.connect(remote)
    #expect(await again.started() == .resumed(version: made))
    let answer = try await remote.answer(to: id)
    await again.settled()
    #expect(await remote.remoteVersion == answer)
    #expect(await source.snapshot.sections == layout("A: b e | B: c d"))
    #expect(await remote.snapshot == source.snapshot)
    #expect(await remote.pendingEditCount == 0)
    #expect(await remote.lastError == nil)
    await again.close()
  }

  @Test("a scoped connection shows its sections and rows; settled() waits for the server's writes")
  func scopedConnection() async throws {
    let source = try BasicDataSource(sections: [
      TestSection(id: "open", header: "", items: [TestItem("a", version: 1), TestItem("b", version: 2)]),
      TestSection(id: "staff", header: "", items: [TestItem("c", version: 1)]),
    ])
    let service = WireService(
      source: source, stream: "s", sections: { (user: Int) in { $0.id == "open" || user == 0 } },
      rows: { user in { $0.version != 2 || user == 0 } })
    let guest = RemoteDataSource<TestSection>()
    let staff = RemoteDataSource<TestSection>()
    let guestConnection = await service.connect(guest, scope: 1)
    let staffConnection = await service.connect(staff, scope: 0)
    try await source.appendItems([TestItem("d", version: 1)], toSection: "staff")
    try await source.appendItems([TestItem("e", version: 1)], toSection: "open")
    await guestConnection.settled()
    await staffConnection.settled()
    #expect(
      await guest.snapshot.sections == [
        TestSection(id: "open", header: "", items: [TestItem("a", version: 1), TestItem("e", version: 1)])
      ])
    #expect(await staff.snapshot == source.snapshot)
    await guestConnection.close()
    await staffConnection.close()
  }

  @Test("settled() and started() on a closed connection return at once")
  func closedConnection() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = WireService(source: source, stream: "s")
    let remote = RemoteDataSource<TestSection>()
    let connection = await service.connect(remote)
    await connection.close()
    await connection.settled()
    _ = await connection.started()
    #expect(await remote.pendingEditCount == 0)
  }
}
