//! Frames to and from pcap files (Ethernet link type), as DPDK's pcap PMD
//! reads and writes them.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::PcapError;

/// Writes `frames` to a new pcap file at `path`, one microsecond apart so the
/// file is identical for identical frames.
pub fn write_pcap(path: impl AsRef<Path>, frames: &[impl AsRef<[u8]>]) -> io::Result<()> {
    let mut writer = PcapWriter::new(BufWriter::new(File::create(path)?)).map_err(to_io)?;
    for (i, frame) in frames.iter().enumerate() {
        let frame = frame.as_ref();
        let len = u32::try_from(frame.len()).map_err(io::Error::other)?;
        let packet = PcapPacket::new(Duration::from_micros(i as u64), len, frame);
        writer.write_packet(&packet).map_err(to_io)?;
    }
    writer.into_writer().flush()
}

/// Reads every frame of the pcap file at `path` (micro- or nanosecond
/// timestamps, either byte order). An empty file reads as no frames: the
/// pcap PMD writes an output's file header only with its first TX burst
/// or when the port closes.
pub fn read_pcap(path: impl AsRef<Path>) -> io::Result<Vec<Vec<u8>>> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(Vec::new());
    }
    let mut reader = PcapReader::new(BufReader::new(file)).map_err(to_io)?;
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        frames.push(packet.map_err(to_io)?.data.into_owned());
    }
    Ok(frames)
}

fn to_io(err: PcapError) -> io::Error {
    match err {
        PcapError::IoError(err) => err,
        other => io::Error::new(io::ErrorKind::InvalidData, other),
    }
}
