// The framing of a replica's files: records that a crash can cut short but never make wrong.

package import Foundation

/// How ``FileReplicaStore`` writes records: each is its length, a CRC-32 of its bytes, then the bytes.
///
/// A file of frames read back tells three things apart: whole records; a torn tail (the last write was cut
/// short by a crash: a prefix of a frame, or a last frame whose checksum fails), which is dropped; and
/// damage (a failing frame with more data after it), which is an error.
package enum ReplicaFrames {
  /// The bytes of one frame: 4 bytes of length and 4 of CRC-32, little-endian, then `payload`.
  /// - Complexity: O(*m*) for *m* payload bytes.
  package static func frame(_ payload: Data) -> Data {
    var bytes = Data(capacity: payload.count + 8)
    appendLittleEndian(UInt32(payload.count), to: &bytes)
    appendLittleEndian(crc32(payload), to: &bytes)
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
    /// The frame at `offset` fails its checksum or overruns the file, and records follow it.
    case damaged(offset: Int)
  }

  /// Reads every frame of `data`.
  /// - Throws: ``Damage`` when a frame other than the last is broken.
  /// - Complexity: O(*b*) for *b* bytes.
  package static func read(_ data: Data) throws(Damage) -> Read {
    var records: [Data] = []
    var offset = data.startIndex
    let end = data.endIndex
    while offset < end {
      guard end - offset >= 8 else {
        return Read(records: records, validLength: offset - data.startIndex, tornTail: true)
      }
      let length = Int(readLittleEndian(data, at: offset))
      let checksum = readLittleEndian(data, at: offset + 4)
      let start = offset + 8
      guard end - start >= length else {
        return Read(records: records, validLength: offset - data.startIndex, tornTail: true)
      }
      let payload = data[start..<start + length]
      guard crc32(payload) == checksum else {
        // A crash leaves a prefix of the last write; a failing frame with records after it is damage.
        if start + length == end {
          return Read(records: records, validLength: offset - data.startIndex, tornTail: true)
        }
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
