//! The codec of every generated client and server: prost's, except that a
//! message that does not decode is `INVALID_ARGUMENT` rather than prost's
//! `INTERNAL`.
//!
//! The engine reads `INTERNAL` from Create, Update or Delete as "the change
//! may have happened" and keeps the operation pending, when a request the
//! provider could not even read changed nothing. The common case is a value
//! nested past prost's limit of 100 messages (about 32 objects within
//! objects, as each object level is three messages), which the engine
//! (Go protobuf, limit 10,000) sends as it is. Removing prost's limit would
//! let such a request overflow the stack, so it stays, and the message says
//! what it is.

use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, DecodeBuf, Decoder};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

pub struct Codec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec(PhantomData)
    }
}

impl<T, U> tonic::codec::Codec for Codec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = InvalidArgument<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::default().encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        InvalidArgument(ProstCodec::<T, U>::default().decoder())
    }
}

/// prost's decoder, with its errors as `INVALID_ARGUMENT`.
pub struct InvalidArgument<U>(ProstDecoder<U>);

impl<U: Message + Default> Decoder for InvalidArgument<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(buf).map_err(|e| {
            let limit =
                if e.message().contains("recursion limit") { " (values may nest about 32 objects deep)" } else { "" };
            Status::invalid_argument(format!("{}{limit}", e.message()))
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}
