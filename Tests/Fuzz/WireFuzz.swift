// libFuzzer target: any bytes, decoded as a wire message and applied to a snapshot, either are refused with
// a WireError or give a valid snapshot; what decodes re-encodes with JSONEncoder's bytes. Never a crash. Built by `.ci/fuzz` against the core and wire modules.

import Foundation
import SimpleSourceCore
import SimpleSourceWire

struct FuzzItem: Identifiable, Equatable, Sendable, Codable {
  var id: String
  var version: Int
}

typealias FuzzSection = Section<String, FuzzItem>

/// What the receiver holds: two shapes, so that positions and ids in the fixtures' range mean something.
let heldStates: [Snapshot<FuzzSection>] = {
  func items(_ ids: String) -> [FuzzItem] {
    ids.split(separator: " ").map { FuzzItem(id: String($0), version: 0) }
  }
  return [
    try! Snapshot([
      FuzzSection(id: "todo", header: "todo v0", items: items("a b c d")),
      FuzzSection(id: "done", header: "done v0", items: items("e")),
    ]),
    try! Snapshot([
      FuzzSection(id: "A", header: "A v0", items: items("a b")),
      FuzzSection(id: "B", header: "B v0", items: items("c d")),
      FuzzSection(id: "C", header: "C v0", items: items("e")),
    ]),
  ]
}()

/// One input: refused with a `WireError`, or applied to a valid snapshot; anything else stops the fuzzer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let coder = WireCoder(maxMessageBytes: 1 << 16)
  let message: WireMessage<FuzzSection>
  do { message = try coder.decode(data) } catch { return 0 }
  // Whatever decodes re-encodes and decodes to the same bytes again.
  let encoded = coder.encode(message)
  guard let again = try? coder.decode(encoded, as: FuzzSection.self), coder.encode(again) == encoded else {
    fatalError("a decoded message does not round-trip: \(String(decoding: encoded, as: UTF8.self))")
  }
  // The messages the coder writes directly (batches) carry the bytes a sorted-key JSONEncoder writes.
  switch message {
  case .batch, .viewBatches, .confirmed:
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard (try? encoder.encode(message)) == encoded else {
      fatalError("a written message differs from JSONEncoder's: \(String(decoding: encoded, as: UTF8.self))")
    }
  default: break
  }
  guard case .batch(let batch) = message else { return 0 }
  for held in heldStates {
    // A receiver's version: the batch's start, numbered by a broadcaster of the receiver's own.
    let receiver = Broadcaster(snapshot: held, version: batch.from)
    guard let update = try? batch.update(from: held, at: receiver.version) else { continue }
    // An accepted batch gives a valid snapshot whose lookups agree with its arrays.
    let sections = update.snapshot.sections
    guard let rebuilt = try? Snapshot(sections), rebuilt == update.snapshot else {
      fatalError("an accepted batch made an invalid snapshot")
    }
    for (sectionIndex, section) in sections.enumerated() {
      for (itemIndex, item) in section.items.enumerated()
      where update.snapshot.position(ofItem: item.id) != ItemPosition(section: sectionIndex, item: itemIndex)
      {
        fatalError("item \(item.id) is not where the snapshot's index says")
      }
    }
    guard update.changeset.target == update.snapshot else { fatalError("the changeset's target differs") }
  }
  return 0
}
