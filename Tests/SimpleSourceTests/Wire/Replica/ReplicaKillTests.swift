// A client process killed with SIGKILL between sending an edit and receiving its answer, started again
// from its replica store: the edit is sent again with its id, made once, and answered.
//
// The client is this test binary run again with `SIMPLESOURCE_REPLICA_CHILD` set (the `client` test): it
// follows the server through its standard input and output, one wire message per line.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private let environment = ProcessInfo.processInfo.environment
private let childFolder = environment["SIMPLESOURCE_REPLICA_CHILD"]

/// A line a client writes: a message for the server, or what it did.
private let messagePrefix = "REPLICA> "
private let editPrefix = "REPLICA-EDIT "
private let answerPrefix = "REPLICA-ANSWER "

/// The lines of `handle`, read on a thread of their own until the end of the file.
private func lines(of handle: FileHandle) -> AsyncStream<String> {
  let (stream, continuation) = AsyncStream.makeStream(of: String.self)
  Thread {
    var pending = Data()
    while true {
      let chunk = handle.availableData
      if chunk.isEmpty { break }
      pending.append(chunk)
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
        pending = Data(pending[(newline + 1)...])
      }
    }
    continuation.finish()
  }.start()
  return stream
}

@Suite("A replica across a killed process", .timeLimit(.minutes(30)))
struct ReplicaKillTests {
  /// The client's side, run only as the child process: it follows the server through its standard input
  /// and output. First run: it takes the reset, makes an edit, says so, and waits to be killed. Second
  /// run: it starts from its store and waits for the edit's answer, says it, and ends.
  @Test("client", .enabled(if: childFolder != nil))
  func client() async throws {
    let folder = URL(fileURLWithPath: try #require(childFolder))
    let remote = RemoteDataSource<TestSection>(clientID: "child", store: FileReplicaStore(directory: folder))
    let output = Locked(())
    @Sendable func say(_ line: String) {
      output.withLock { _ in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
      }
    }
    await remote.connect { message in
      say(messagePrefix + String(decoding: WireCoder().encode(message), as: UTF8.self))
    }
    var input = lines(of: FileHandle.standardInput).makeAsyncIterator()
    if let id = environment["SIMPLESOURCE_REPLICA_AGAIN"] {
      #expect(await remote.pendingEditCount == 1)
      async let answer = remote.answer(to: id)
      while let line = await input.next() {
        try await remote.receive(Data(line.utf8))
        if await remote.pendingEditCount == 0 { break }
      }
      say(answerPrefix + String(try await answer))
    } else {
      while await remote.remoteVersion == nil, let line = await input.next() {
        try await remote.receive(Data(line.utf8))
      }
      let id = try await remote.submit([.delete(["a"])])
      say(editPrefix + id)
      while await input.next() != nil {}  // until killed
    }
  }

  @Test(
    "a client killed between sending an edit and its answer, started from its store, gets it made once",
    .enabled(if: childFolder == nil))
  func killedClient() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let made = Locked<[(id: String, version: Int)]>([])
    let transactions = WireWriter<TestSection, NoScope>.transactions(on: source)
    let service = WireService(
      source: source, stream: "s",
      edits: WireWriter { (edit, scope, visible) throws(WireError) in
        let version = try await transactions.write(edit, scope, visible)
        made.withLock { $0.append((edit.id, version)) }
        return version
      })
    let folder = ReplicaFolder()

    /// Starts the client; what the server sends goes to its input while `forwarding` says so.
    func start(again edit: String?, forwarding: Locked<Bool>) throws -> (
      process: Process, lines: AsyncStream<String>, session: WireSession<TestSection, NoScope>
    ) {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
      process.arguments = ["--filter", "ReplicaKillTests/client", "--testing-library", "swift-testing"]
      var childEnvironment = environment
      childEnvironment["SIMPLESOURCE_REPLICA_CHILD"] = folder.url.path
      if let edit { childEnvironment["SIMPLESOURCE_REPLICA_AGAIN"] = edit }
      process.environment = childEnvironment
      let input = Pipe()
      let output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      let writer = input.fileHandleForWriting
      let session = service.session { data in
        if forwarding.withLock({ $0 }) { writer.write(data + Data("\n".utf8)) }
      }
      return (process, lines(of: output.fileHandleForReading), session)
    }

    // First run: the client takes the reset and makes its edit; the server makes it, and the client is
    // killed before the answer reaches it.
    let forwarding = Locked(true)
    let first = try start(again: nil, forwarding: forwarding)
    var edit: String?
    for await line in first.lines {
      if line.hasPrefix(editPrefix) {
        edit = String(line.dropFirst(editPrefix.count))
        break
      }
      guard line.hasPrefix(messagePrefix) else { continue }
      let message = Data(line.dropFirst(messagePrefix.count).utf8)
      if case .edit = try WireCoder().decode(message, as: TestSection.self) {
        forwarding.withLock { $0 = false }  // its answer is never delivered
      }
      await first.session.receive(message)
      await first.session.settled()
    }
    // The client says it made the edit after sending it, and the session made it before taking the next
    // line: the server holds the edit, and the client holds no answer.
    // The store was new: its edits have an epoch of their own.
    let id = try #require(edit)
    #expect(id.hasPrefix("child.") && id.hasSuffix("-1"), "\(id)")
    kill(first.process.processIdentifier, SIGKILL)
    first.process.waitUntilExit()
    #expect(first.process.terminationReason == .uncaughtSignal)
    await first.session.close()
    let madeFirst = made.withLock { $0 }
    #expect(madeFirst.map(\.id) == [id])

    // Second run: from its store, it sends the edit again with its id; the server answers it once.
    let second = try start(again: id, forwarding: Locked(true))
    var answer: Int?
    for await line in second.lines {
      if line.hasPrefix(answerPrefix) {
        answer = Int(line.dropFirst(answerPrefix.count))
        break
      }
      guard line.hasPrefix(messagePrefix) else { continue }
      await second.session.receive(Data(line.dropFirst(messagePrefix.count).utf8))
    }
    second.process.waitUntilExit()
    #expect(second.process.terminationStatus == 0)
    await second.session.close()
    #expect(answer == madeFirst.first?.version)
    #expect(made.withLock { $0.map(\.id) } == [id], "the edit was made once")
    #expect(await source.snapshot.sections.flatMap(\.items).map(\.id) == ["b", "c"])
  }
}
