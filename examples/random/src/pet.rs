//! `RandomPet`: a readable name such as `quickly-brave-otter`, used as the
//! resource ID. Like pulumi-random: one word is a name, two are an adjective
//! and a name, and each further word is an adverb in front.

use std::collections::BTreeMap;

use pulumi_wasm_sdk::typed::*;

use crate::rng::{Rng, SecureRng, choose};

pub const MAX_WORDS: u32 = 64;

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

/// Generates a random pet name, such as `brave-otter`, as the resource's ID. One word is a name, two are an
/// adjective and a name, and each further word adds an adverb in front. Changing any input generates a new name.
#[derive(PulumiType, Clone, Debug, PartialEq)]
#[pulumi(replace_on_changes)]
pub struct Pet {
    /// The length (in words) of the pet name. Between 1 and 64.
    #[pulumi(default = 2, min = 1, max = MAX_WORDS)]
    pub length: u32,
    /// The character to separate words in the pet name.
    #[pulumi(default = "-")]
    pub separator: String,
    /// A string to prefix the name with.
    pub prefix: Option<String>,
    /// Arbitrary map of values that, when changed, will trigger recreation of the resource.
    pub keepers: Option<BTreeMap<String, String>>,
}

impl Pet {
    pub fn generate(&self, rng: &mut dyn Rng) -> Result<String> {
        let mut words = Vec::with_capacity(self.length as usize + 1);
        words.extend(self.prefix.as_deref().filter(|p| !p.is_empty()));
        for _ in 2..self.length {
            words.push(*choose(rng, ADVERBS)?);
        }
        if self.length >= 2 {
            words.push(*choose(rng, ADJECTIVES)?);
        }
        words.push(*choose(rng, NAMES)?);
        Ok(words.join(&self.separator))
    }
}

/// The name is the ID; the state is the inputs.
pub struct RandomPet;

impl Resource for RandomPet {
    const TOKEN: &'static str = "random:index:RandomPet";
    type Inputs = Pet;
    type State = Pet;

    fn create(&self, ctx: &Context, pet: Pet) -> Result<(String, Pet)> {
        let id = pet.generate(&mut SecureRng::new()?)?;
        ctx.log().info(&format!("generated the pet name {id}"));
        Ok((id, pet))
    }

    fn update(&self, _ctx: &Context, _id: &str, _olds: Pet, pet: Pet) -> Result<Pet> {
        Ok(pet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use pulumi_wasm_sdk::props;

    fn pet(news: PropertyMap) -> Pet {
        let r = check_inputs(&RandomPet, news);
        assert!(r.failures.is_empty());
        decode::<Pet>(&r.inputs).value.unwrap()
    }

    #[test]
    fn defaults_give_adjective_and_name() {
        let name = pet(props! {}).generate(&mut SplitMix64::new(5)).unwrap();
        let words: Vec<&str> = name.split('-').collect();
        assert_eq!(words.len(), 2);
        assert!(ADJECTIVES.contains(&words[0]) && NAMES.contains(&words[1]), "{name}");
    }

    #[test]
    fn length_separator_and_prefix() {
        let p = pet(props! { "length" => 4, "separator" => "_", "prefix" => "dev" });
        let name = p.generate(&mut SplitMix64::new(6)).unwrap();
        let words: Vec<&str> = name.split('_').collect();
        assert_eq!(words.len(), 5, "{name}");
        assert_eq!(words[0], "dev");
        assert!(ADVERBS.contains(&words[1]) && ADVERBS.contains(&words[2]), "{name}");
        assert!(ADJECTIVES.contains(&words[3]) && NAMES.contains(&words[4]), "{name}");
        let one = pet(props! { "length" => 1 }).generate(&mut SplitMix64::new(6)).unwrap();
        assert!(NAMES.contains(&one.as_str()), "{one}");
    }
}
