// console behaviour
