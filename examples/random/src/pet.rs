//! `RandomPet`: a readable name such as `quickly-brave-otter`, used as the
//! resource ID. Like pulumi-random: one word is a name, two are an adjective
//! and a name, and each further word is an adverb in front.

use pulumi_wasm_sdk::{PropertyMap, Result};

use crate::Generated;
use crate::check::{Checker, Int};
use crate::rng::{Rng, choose};

pub const INPUTS: &[&str] = &["length", "separator", "prefix", "keepers"];

pub const MAX_WORDS: i64 = 64;

const ADVERBS: &[&str] = &[
    "boldly", "briefly", "calmly", "closely", "deeply", "eagerly", "easily", "fairly", "gently", "gladly", "happily",
    "honestly", "kindly", "lightly", "loudly", "neatly", "nicely", "openly", "quickly", "quietly", "rarely", "really",
    "safely", "simply", "slowly", "smoothly", "softly", "surely", "truly", "warmly",
];

const ADJECTIVES: &[&str] = &[
    "amazing", "brave", "bright", "busy", "calm", "charming", "clever", "cosmic", "curious", "daring", "eager",
    "fancy", "fluent", "gentle", "glad", "golden", "happy", "helpful", "humble", "jolly", "keen", "lively", "lucky",
    "merry", "mighty", "noble", "polite", "proud", "quick", "quiet", "rapid", "ready", "smart", "steady", "sunny",
    "swift", "tidy", "upbeat", "vivid", "witty",
];

const NAMES: &[&str] = &[
    "badger", "beagle", "beaver", "bison", "bobcat", "camel", "cat", "cheetah", "cobra", "corgi", "crane", "dingo",
    "dolphin", "eagle", "falcon", "ferret", "finch", "gecko", "gopher", "heron", "ibex", "jackal", "koala", "lemur",
    "lynx", "marmot", "mole", "newt", "ocelot", "otter", "owl", "panda", "puffin", "quokka", "raven", "seal", "sloth",
    "tapir", "walrus", "yak",
];

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub length: usize,
    pub separator: String,
    pub prefix: String,
}

pub fn check(c: &mut Checker) -> Option<Params> {
    let length = c.integer("length", Int::defaults_to(2, 1, MAX_WORDS));
    let separator = c.string("separator", "-");
    let prefix = c.optional_string("prefix");
    c.string_map("keepers");
    Some(Params { length: length? as usize, separator: separator?, prefix: prefix?.unwrap_or_default() })
}

pub fn generate(p: &Params, rng: &mut dyn Rng) -> Result<String> {
    let mut words = Vec::with_capacity(p.length + 1);
    if !p.prefix.is_empty() {
        words.push(p.prefix.as_str());
    }
    for _ in 2..p.length {
        words.push(*choose(rng, ADVERBS)?);
    }
    if p.length >= 2 {
        words.push(*choose(rng, ADJECTIVES)?);
    }
    words.push(*choose(rng, NAMES)?);
    Ok(words.join(&p.separator))
}

/// The name is the ID; there are no other outputs.
pub fn create(p: &Params, rng: &mut dyn Rng) -> Result<Generated> {
    let id = generate(p, rng)?;
    Ok(Generated { summary: format!("generated the pet name {id}"), id, outputs: PropertyMap::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use pulumi_wasm_sdk::props;

    fn params(news: PropertyMap) -> Params {
        let mut c = Checker::new(&news, INPUTS);
        let p = check(&mut c);
        assert!(c.finish().failures.is_empty());
        p.unwrap()
    }

    #[test]
    fn defaults_give_adjective_and_name() {
        let name = generate(&params(props! {}), &mut SplitMix64::new(5)).unwrap();
        let words: Vec<&str> = name.split('-').collect();
        assert_eq!(words.len(), 2);
        assert!(ADJECTIVES.contains(&words[0]) && NAMES.contains(&words[1]), "{name}");
    }

    #[test]
    fn length_separator_and_prefix() {
        let p = params(props! { "length" => 4, "separator" => "_", "prefix" => "dev" });
        let name = generate(&p, &mut SplitMix64::new(6)).unwrap();
        let words: Vec<&str> = name.split('_').collect();
        assert_eq!(words.len(), 5, "{name}");
        assert_eq!(words[0], "dev");
        assert!(ADVERBS.contains(&words[1]) && ADVERBS.contains(&words[2]), "{name}");
        assert!(ADJECTIVES.contains(&words[3]) && NAMES.contains(&words[4]), "{name}");
        let one = generate(&params(props! { "length" => 1 }), &mut SplitMix64::new(6)).unwrap();
        assert!(NAMES.contains(&one.as_str()), "{one}");
    }
}
