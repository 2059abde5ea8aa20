// The framing of a replica's files: records that a crash can cut short but never make wrong.

package import Foundation

/// How ``FileReplicaStore`` writes records: each is its length, a CRC-32 of its bytes, a CRC-32 of those
/// eight bytes, then the bytes.
///
/// A file of frames read back tells three things apart:
/// - **whole records**;
/// - **a torn tail**, which is dropped: what a crash leaves of the last write, a prefix of its frame (a
///   header cut short, or a checked header whose record runs past the end), possibly followed by zero
///   bytes where the file grew but its blocks were not written;
/// - **damage**, an error: anything else, such as a header that fails its check (a flipped bit in a
///   length can never pass for a torn tail and hide the records after it), or a whole record that fails
///   its checksum and does not end in zeros.
///
/// Payloads must not end with a zero byte (the store's records are JSON), so that a changed record is
/// never read as an unwritten one.
package enum ReplicaFrames {
  /// The size of a frame's header: the length, the payload's CRC-32 and the header's own.
  package static var headerSize: Int { 12 }

  /// The bytes of one frame: 4 bytes of length, 4 of the payload's CRC-32 and 4 of the CRC-32 of those 8,
  /// little-endian, then `payload`.
  /// - Precondition: `payload` does not end with a zero byte.
  /// - Complexity: O(*m*) for *m* payload bytes.
  package static func frame(_ payload: Data) -> Data {
    precondition(payload.last != 0, "SimpleSource: a replica record must not end with a zero byte")
    var bytes = Data(capacity: payload.count + headerSize)
    appendLittleEndian(UInt32(payload.count), to: &bytes)
    appendLittleEndian(crc32(payload), to: &bytes)
    appendLittleEndian(crc32(bytes), to: &bytes)
    bytes.append(payload)
    return bytes
  }

  /// What a file of frames holds.
  package struct Read: Equatable {
    /// The payloads of the whole records, in order.
    package var records: [Data]
    /// The length of the whole records: where the next frame is written (a torn tail is cut there).
    package var validLength: Int
    /// Whether the file ends with a torn frame that ``validLength`` leaves out.
    package var tornTail: Bool
  }

  /// Why a file of frames cannot be read.
  package enum Damage: Error, Equatable {
    /// The frame at `offset` fails its header's check, or its record fails its checksum and is not the
    /// unwritten end of the file.
    case damaged(offset: Int)
  }

  /// Reads every frame of `data`.
  /// - Throws: ``Damage`` when a frame is broken in a way no crash leaves.
  /// - Complexity: O(*b*) for *b* bytes.
  package static func read(_ data: Data) throws(Damage) -> Read {
    var records: [Data] = []
    var offset = data.startIndex
    let end = data.endIndex
    func torn() -> Read { Read(records: records, validLength: offset - data.startIndex, tornTail: true) }
    /// Whether every byte from `index` to the end is zero: blocks the file system never wrote.
    func unwritten(from index: Int) -> Bool { data[index..<end].allSatisfy { $0 == 0 } }
    while offset < end {
      guard end - offset >= headerSize else { return torn() }
      let length = Int(readLittleEndian(data, at: offset))
      let checksum = readLittleEndian(data, at: offset + 4)
      guard crc32(data[offset..<offset + 8]) == readLittleEndian(data, at: offset + 8) else {
        // A header written in part: its last byte and all after it unwritten.
        if unwritten(from: offset + headerSize - 1) { return torn() }
        throw .damaged(offset: offset - data.startIndex)
      }
      let start = offset + headerSize
      // The header checks: the length is the one written, and a record past the end was cut short.
      guard end - start >= length else { return torn() }
      let payload = data[start..<start + length]
      guard crc32(payload) == checksum else {
        if length > 0, unwritten(from: start + length - 1) { return torn() }
        throw .damaged(offset: offset - data.startIndex)
      }
      records.append(Data(payload))
      offset = start + length
    }
    return Read(records: records, validLength: offset - data.startIndex, tornTail: false)
  }

  /// The CRC-32 (IEEE 802.3, as zlib computes it) of `bytes`.
  /// - Complexity: O(*m*) for *m* bytes.
  package static func crc32(_ bytes: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    bytes.withUnsafeBytes { buffer in
      for byte in buffer { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
    return crc ^ 0xFFFF_FFFF
  }

  private static let crcTable: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
    return value
  }

  private static func appendLittleEndian(_ value: UInt32, to bytes: inout Data) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  private static func readLittleEndian(_ data: Data, at offset: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 | UInt32(data[offset + $1]) << (8 * UInt32($1)) }
  }
}
