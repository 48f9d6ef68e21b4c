fn main() {
    println!("qsim");
}
