//! Translation between the protobuf wire types and the WIT types.

pub mod requests;
pub mod value;
